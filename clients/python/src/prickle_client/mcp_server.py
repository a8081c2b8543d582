"""`prickle-mcp`: the task server's moves as MCP tools, for LLM agents.

    prickle-mcp --url http://127.0.0.1:8000/graphql --token $PRICKLE_TOKEN      # stdio
    prickle-mcp --url ... --transport streamable-http --port 8765             # HTTP, /mcp

Every tool acts as the principal whose token the server holds (`--token`, or
PRICKLE_TOKEN); over streamable HTTP a request's own `Authorization: Bearer <token>` takes
its place, so several agents can share one MCP server. Tools talk to prickle through
`AsyncClient`. The task verbs' tools are made from the server's declarations, read once at
start (its `task_verbs` query): one per verb, its description the verb's guide, its
arguments the verb's, destructive as the verb is declared.
A refused move comes back as a tool error: its code, the server's message, the moves the
caller may make on the task now, and what to do.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Annotated, Any, Literal, TypeVar

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import ToolAnnotations
except ModuleNotFoundError as missing:  # the client installed without its `mcp` extra
    message = "prickle-mcp needs the MCP SDK: pip install 'prickle-client[mcp]'"
    raise ModuleNotFoundError(message) from missing
from pydantic import Field, ValidationError, WithJsonSchema

from . import shapes
from ._async import AsyncClient
from ._base import Task
from .errors import PrickleError, RateLimited, Unavailable
from .generated.enums import TaskState
from .generated.task_verbs import TaskVerbsTaskVerbs, TaskVerbsTaskVerbsArguments

T = TypeVar("T")

INSTRUCTIONS = """\
Prickle hands tasks between agents. To get work: wait_for_work (it blocks until a task is
routed to you; pass back the cursor it returns), or list_my_tasks. Then accept_task,
start_task, save_checkpoint as you go, and return_result with evidence (hand_back if you
cannot do it). To give work to another agent: handoff or request_capability. Every task
carries `allowed_verbs`: the tools you may call on it now (each verb is the tool's name)."""

NEXT_STEP = {
    "invalid_state": "The task is not in a state that allows this move. Make one of the "
    "moves in its allowed_verbs instead.",
    "forbidden": "You may not make this move on this task. Make one of the moves in its "
    "allowed_verbs instead.",
    "not_found": "No such task (or agent) is visible to you. Check the id with "
    "list_my_tasks, or the agent's name with its owner.",
    "invalid_input": "Fix the arguments as the message says, then call the tool again.",
    "unauthenticated": "The token was refused. The MCP server needs a valid token "
    "(--token, PRICKLE_TOKEN, or an Authorization header over HTTP).",
    "conflict": "The task changed since you read it (or an idempotency key was reused for "
    "another request). Call get_task and retry with its current version as "
    "expected_version if the move still makes sense; use a new idempotency_key for a new task.",
    "turn_budget_exhausted": "The task's turn budget is spent: return_result with what you "
    "have, or hand_back.",
    "rate_limited": "Too many moves at once; nothing changed. Wait, then call again.",
    "unavailable": "The server's database is unavailable. If the message says nothing "
    "changed, wait and call again; if the outcome is unknown, call get_task first and make "
    "the move again only if the task has not moved.",
    "query_too_complex": "The request was too large. Send shorter text.",
    "transport": "The task server did not answer. Try again later; a move may have been "
    "made: call get_task before making it again.",
    "internal": "The task server failed. Try again later; nothing may have changed.",
}

READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WAIT_LONGEST = 60.0

TaskId = Annotated[str, Field(description="The task's id (from list_my_tasks or get_task).")]
ExpectedVersion = Annotated[
    int | None,
    Field(
        description="Refuse with `conflict` unless the task is at this version "
        "(its `version` from get_task). Leave out to move it whatever its version."
    ),
]
Packet = Annotated[
    dict[str, Any],
    WithJsonSchema(shapes.packet()),
    Field(
        description="What is asked: `task` (one sentence), `deliverable_type`, and "
        "`acceptance_criteria` (1 to 20 checkable statements; a result's evidence cites "
        "each by its index); optionally `context`, `files`, `depends_on`."
    ),
]
Capability = Annotated[
    dict[str, Any],
    WithJsonSchema(shapes.capability()),
    Field(description="The capability wanted: {kind, name}, e.g. {kind: repo, name: prickle}."),
]
Project = Annotated[str, Field(description="The project the task belongs to.")]
DisplayTitle = Annotated[str | None, Field(description="A short title.")]
TurnBudget = Annotated[
    int | None, Field(description="How many checkpoints it may take (null: unlimited).")
]
ParentTaskId = Annotated[str | None, Field(description="The task this one is a subtask of.")]
IdempotencyKey = Annotated[
    str | None,
    Field(
        description="A key of your own: a retry of the same request with it returns the "
        "same task; the key reused for another request is refused (conflict)."
    ),
]
Cursor = Annotated[
    str | None,
    Field(description="The cursor a previous call returned, to go on from there."),
]

# Each GraphQL input type of a verb's arguments as the tool takes it: the protocol's shapes.
INPUT_SHAPES: dict[str, Callable[[], dict[str, Any]]] = {
    "CheckpointInput": shapes.checkpoint,
    "ResultInput": lambda: shapes.result(),
    "VerdictInput": shapes.verdict,
    "CapabilityInput": shapes.capability,
}
SCALARS: dict[str, type] = {"String": str, "ID": str, "Int": int, "Boolean": bool}
# wait_on's `on` as the tool takes it: the protocol's wait on an agent naming none is its own
# choice, `subtasks` (`_wait_variables`)
WAIT_ON_TEXT = (
    "human: a person answers; agent: the agent named in `agent` answers; subtasks: the task "
    "resumes once its own subtasks have all ended."
)
TASK_SELECTION = (
    "as_protocol version allowed_verbs "
    "question { on question asked_by agent answerers resumes_when_subtasks_end }"
)


class Agents:
    """One AsyncClient per token: the server's own, or each HTTP request's."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url = url
        self.token = token
        self._clients: dict[str, AsyncClient] = {}

    def client(self, ctx: Context | None) -> AsyncClient:
        token = _bearer(ctx) or self.token
        if not token:
            raise ToolError(f"unauthenticated: no token. {NEXT_STEP['unauthenticated']}")
        if token not in self._clients:
            self._clients[token] = AsyncClient(self.url, token)
        return self._clients[token]


def _bearer(ctx: Context | None) -> str | None:
    headers = ctx.headers if ctx is not None else None
    value = headers.get("authorization", "") if headers else ""
    if not value.lower().startswith("bearer "):
        return None
    return value[len("bearer ") :].strip() or None


async def refused_as_tool_error(call: Awaitable[T]) -> T:
    """The call's value; a refusal raised as a ToolError an agent can act on."""
    try:
        return await call
    except PrickleError as error:
        raise ToolError(tool_error_text(error)) from error
    except ValidationError as error:
        raise ToolError(f"invalid_input: {error}. {NEXT_STEP['invalid_input']}") from error


def tool_error_text(error: PrickleError, allowed: list[str] | None = None) -> str:
    text = f"{error.code}: {error.message}"
    if error.code == "invalid_state" and error.extensions.get("state"):
        text += f" (the task is {error.extensions['state']})"
    if isinstance(error, (RateLimited, Unavailable)) and error.retry_after is not None:
        text += f" (retry after {error.retry_after:g} s)"
    if allowed is not None:
        text += f". allowed_verbs now: {', '.join(allowed) if allowed else 'none'}"
    return f"{text}. {NEXT_STEP.get(error.code, NEXT_STEP['internal'])}"


def view(task: Task) -> dict[str, Any]:
    """The task as a tool returns it: the protocol's object, its version, your moves, and
    the open question of a wait (what is asked and who may answer)."""
    question = task.question.model_dump(mode="json") if task.question else None
    return {
        **task.as_protocol,
        "version": task.version,
        "allowed_verbs": task.allowed_verbs,
        "question": question,
    }


def summary(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "project": task.project,
        "state": task.state.value,
        "waiting_on": task.waiting_on.value if task.waiting_on else None,
        "requester": task.requester,
        "assignee": task.assignee,
        "task": task.display_title or task.packet.task,
        "version": task.version,
        "allowed_verbs": task.allowed_verbs,
    }


def version() -> str:
    try:
        return metadata.version("prickle-client")
    except metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "0"


def build_server(url: str, token: str | None) -> MCPServer:
    """The MCP server of the task server at `url` (its /graphql endpoint)."""
    agents = Agents(url, token)
    verbs = [_verb_tool(verb, agents) for verb in served_verbs(url, token)]
    server = MCPServer("prickle", instructions=INSTRUCTIONS, version=version(), tools=verbs)
    _task_tools(server, agents)
    _creation_tools(server, agents)
    _resources(server, agents)
    return server


# the task verbs, one tool each, from the server's declarations


def served_verbs(url: str, token: str | None) -> list[TaskVerbsTaskVerbs]:
    """The server's task verbs (its task_verbs query, which needs no token)."""

    async def read() -> list[TaskVerbsTaskVerbs]:
        async with AsyncClient(url, token or "") as client:
            return await client.task_verbs()

    return asyncio.run(read())


def _verb_tool(verb: TaskVerbsTaskVerbs, agents: Agents) -> Tool:
    name = verb.name
    arguments = verb.arguments
    document = _document(name, arguments)

    async def move(
        ctx: Context, task_id: str, expected_version: int | None = None, **given: Any
    ) -> dict[str, Any]:
        variables = {"task_id": task_id, "expected_version": expected_version, **given}
        if name == "wait_on":
            variables = _wait_variables(variables)
        return await _move(agents.client(ctx), name, document, variables)

    given = [_parameter(a, name) for a in arguments]
    move.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context),
            inspect.Parameter("task_id", inspect.Parameter.KEYWORD_ONLY, annotation=TaskId),
            *given,
            inspect.Parameter(
                "expected_version",
                inspect.Parameter.KEYWORD_ONLY,
                annotation=ExpectedVersion,
                default=None,
            ),
        ],
        return_annotation=dict[str, Any],
    )
    move.__annotations__ = {"ctx": Context, "return": dict[str, Any]}
    tool = Tool.from_function(
        move,
        name=name,
        description=f"{verb.guide} Call it only when {name!r} is in the task's allowed_verbs.",
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=verb.destructive,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    if name == "wait_on":
        tool.parameters = _wait_schema(tool.parameters)
    return tool


def _parameter(argument: TaskVerbsTaskVerbsArguments, verb: str) -> Any:
    """The tool parameter of one of the verb's GraphQL arguments."""
    graphql_type = argument.type_
    named = graphql_type.strip("[]!")
    choices = argument.options
    text = argument.description
    python: Any
    if verb == "wait_on" and argument.name == "on":
        choices, text = [*(choices or []), "subtasks"], WAIT_ON_TEXT
    if choices is not None:
        python = Literal[tuple(choices)]
    elif named in INPUT_SHAPES:
        shape = INPUT_SHAPES[named]()
        many = graphql_type.startswith("[")
        python = Annotated[
            list[dict[str, Any]] if many else dict[str, Any],
            WithJsonSchema({"type": "array", "items": shape} if many else shape),
        ]
    else:
        python = SCALARS[named]
        if graphql_type.startswith("["):
            python = list[python]
    required = argument.required
    if not required:
        python = python | None
    annotation = Annotated[python, Field(description=text)] if text else python
    default = inspect.Parameter.empty if required else None
    return inspect.Parameter(
        argument.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )


def _document(name: str, arguments: list[TaskVerbsTaskVerbsArguments]) -> str:
    declared = ["$task_id: ID!", *(f"${a.name}: {a.type_}" for a in arguments)]
    passed = ["task_id: $task_id", *(f"{a.name}: ${a.name}" for a in arguments)]
    declared.append("$expected_version: Int")
    passed.append("expected_version: $expected_version")
    return (
        f"mutation({', '.join(declared)}) {{ {name}({', '.join(passed)}) {{ {TASK_SELECTION} }} }}"
    )


async def _move(
    client: AsyncClient, name: str, document: str, variables: dict[str, Any]
) -> dict[str, Any]:
    try:
        data = await client.execute(document, variables)
    except PrickleError as error:
        allowed = None
        if error.code in ("invalid_state", "forbidden"):
            allowed = await _allowed_now(client, variables["task_id"])
        raise ToolError(tool_error_text(error, allowed)) from error
    moved: dict[str, Any] = data[name]
    return {
        **moved["as_protocol"],
        "version": moved["version"],
        "allowed_verbs": moved["allowed_verbs"],
        "question": moved["question"],
    }


async def _allowed_now(client: AsyncClient, task_id: str) -> list[str] | None:
    try:
        task = await client.task(task_id)
    except PrickleError:
        return None
    return None if task is None else task.allowed_verbs


def _wait_variables(variables: dict[str, Any]) -> dict[str, Any]:
    """on=subtasks is the protocol's wait on `agent` naming none: the subtasks' ends answer."""
    on, agent = variables.get("on"), variables.get("agent")
    if on == "agent" and not agent:
        raise ToolError(
            "invalid_input: agent: on=agent names the agent to wait on (owner/name); to wait "
            f"for the task's own subtasks use on=subtasks. {NEXT_STEP['invalid_input']}"
        )
    if on != "agent" and agent:
        raise ToolError(
            f"invalid_input: agent: only on=agent names an agent. {NEXT_STEP['invalid_input']}"
        )
    return {**variables, "on": "agent" if on == "subtasks" else on}


def _wait_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`agent` required when on=agent, and null (or left out) otherwise."""
    condition = {
        "if": {"properties": {"on": {"const": "agent"}}, "required": ["on"]},
        "then": {"required": ["agent"], "properties": {"agent": {"type": "string"}}},
        "else": {"properties": {"agent": {"type": "null"}}},
    }
    return {**schema, "allOf": [*schema.get("allOf", []), condition]}


# reading, waiting for work, and creating tasks


def _task_tools(server: MCPServer, agents: Agents) -> None:
    @server.tool(annotations=READS)
    async def list_my_tasks(
        ctx: Context,
        role: Annotated[
            Literal["assignee", "requester"],
            Field(description="assignee: tasks handed to you; requester: tasks you handed off."),
        ] = "assignee",
        state: Annotated[
            TaskState | None,
            Field(description="Only tasks in this state (routed: new work to accept)."),
        ] = None,
        project: Annotated[str | None, Field(description="Only tasks of this project.")] = None,
        limit: Annotated[
            int, Field(ge=1, le=100, description="At most this many tasks (1 to 100).")
        ] = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """List your tasks, oldest first, at most `limit` (20 unless told, 100 at most),
        each with its state and the moves you may make (allowed_verbs). `next_cursor`
        (null: no more) gives the next ones. New work handed to you is in state `routed`:
        accept_task it (or wait_for_work for the next)."""
        client = agents.client(ctx)
        me = (await refused_as_tool_error(client.me())).id
        assignee, requester = (me, None) if role == "assignee" else (None, me)
        page = await refused_as_tool_error(
            client.tasks_page(
                project=project,
                state=state,
                assignee=assignee,
                requester=requester,
                first=limit,
                after=cursor,
            )
        )
        more = page.page_info.has_next_page
        return {
            "tasks": [summary(edge.node) for edge in page.edges],
            "next_cursor": page.page_info.end_cursor if more else None,
        }

    @server.tool(annotations=READS)
    async def wait_for_work(
        ctx: Context,
        timeout_seconds: Annotated[
            float,
            Field(gt=0, le=WAIT_LONGEST, description="Wait at most this long (up to 60 s)."),
        ] = 30.0,
        cursor: Cursor = None,
        project: Annotated[str | None, Field(description="Only work of this project.")] = None,
    ) -> dict[str, Any]:
        """Wait until a task is routed to you, at most `timeout_seconds` (60 at most).
        Returns `tasks` (routed to you and waiting: accept_task each, or deny_task) and a
        `cursor`: pass it to the next call so no task routed meanwhile is missed. Work
        already waiting comes back at once; an empty `tasks` means the time ran out."""
        client = agents.client(ctx)
        me = (await refused_as_tool_error(client.me())).id
        waiting = await refused_as_tool_error(
            client.tasks_page(state="routed", assignee=me, project=project, first=20)
        )
        if waiting.edges:
            return {"tasks": [summary(e.node) for e in waiting.edges], "cursor": cursor}
        return await refused_as_tool_error(
            _next_routed(client, me, project, cursor, timeout_seconds)
        )

    @server.tool(annotations=READS)
    async def get_task(ctx: Context, task_id: TaskId) -> dict[str, Any]:
        """The whole task: its packet (what is asked, the acceptance criteria), state,
        latest checkpoint, result, version, the moves you may make (allowed_verbs) and,
        while it waits, its `question` (what is asked, who may answer)."""
        task = await refused_as_tool_error(agents.client(ctx).task(task_id))
        if task is None:
            raise ToolError(f"not_found: no task {task_id}. {NEXT_STEP['not_found']}")
        return view(task)


async def _next_routed(
    client: AsyncClient, me: str, project: str | None, cursor: str | None, timeout: float
) -> dict[str, Any]:
    """The next task routed to `me` after `cursor` (from now, without one), or none in time."""
    stream = client.events(assignee=me, project=project, after=cursor)
    events = aiter(stream)
    try:
        async with asyncio.timeout(timeout):
            async for event in events:
                if event.to_state == TaskState.routed and event.task.assignee == me:
                    task = await client.task(event.task_id)
                    if task is not None and task.state == TaskState.routed:
                        return {"tasks": [summary(task)], "cursor": event.cursor}
    except TimeoutError:
        pass
    finally:
        await events.aclose()  # type: ignore[attr-defined]
    return {"tasks": [], "cursor": stream.cursor or cursor}


def _creation_tools(server: MCPServer, agents: Agents) -> None:
    creates = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    )

    @server.tool(annotations=creates)
    async def handoff(
        ctx: Context,
        project: Project,
        assignee: Annotated[str, Field(description="The agent to hand it to: owner/name.")],
        packet: Packet,
        display_title: DisplayTitle = None,
        turn_budget: TurnBudget = None,
        parent_task_id: ParentTaskId = None,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Hand a task to another agent. Its owner's permission gate routes it (state
        `routed`), holds it for the owner's approval (`waiting`), or rejects it."""
        client = agents.client(ctx)
        made = client.handoff(
            project,
            assignee,
            packet,
            display_title=display_title,
            turn_budget=turn_budget,
            parent_task_id=parent_task_id,
            idempotency_key=idempotency_key,
        )
        return view(await refused_as_tool_error(made))

    @server.tool(annotations=creates)
    async def request_capability(
        ctx: Context,
        project: Project,
        capability: Capability,
        packet: Packet,
        display_title: DisplayTitle = None,
        turn_budget: TurnBudget = None,
        parent_task_id: ParentTaskId = None,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Hand a task to whichever agent offers a capability (your owner's own agents
        first); its owner's gate routes, holds or rejects it, as for handoff."""
        client = agents.client(ctx)
        made = client.request_capability(
            project,
            capability,
            packet,
            display_title=display_title,
            turn_budget=turn_budget,
            parent_task_id=parent_task_id,
            idempotency_key=idempotency_key,
        )
        return view(await refused_as_tool_error(made))


def _resources(server: MCPServer, agents: Agents) -> None:
    @server.resource(
        "prickle://tasks/{task_id}", mime_type="application/json", description="A task."
    )
    async def task_resource(task_id: str, ctx: Context) -> str:
        try:
            task = await agents.client(ctx).task(task_id)
        except PrickleError as error:
            raise ResourceError(tool_error_text(error)) from error
        if task is None:
            raise ResourceError(f"not_found: no task {task_id}")
        return json.dumps(view(task))

    @server.resource(
        "prickle://tasks/{task_id}/history",
        mime_type="application/json",
        description="A task's events, oldest first: each move, who made it, and when.",
    )
    async def task_history(task_id: str, ctx: Context) -> str:
        client = agents.client(ctx)
        events: list[dict[str, Any]] = []
        after: str | None = None
        try:
            while page := await client.task_events(task_id=task_id, after=after, first=100):
                events += [event.model_dump(mode="json") for event in page]
                after = page[-1].cursor
        except PrickleError as error:
            raise ResourceError(tool_error_text(error)) from error
        return json.dumps(events)


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(
        prog="prickle-mcp",
        description="The Prickle task server's moves as MCP tools, over stdio or streamable "
        "HTTP. Each tool acts as the principal of the token.",
        epilog="Environment: PRICKLE_URL and PRICKLE_TOKEN stand in for --url and --token.",
    )
    found.add_argument(
        "--url",
        default=os.environ.get("PRICKLE_URL"),
        help="the task server's GraphQL endpoint, e.g. http://127.0.0.1:8000/graphql "
        "(default: $PRICKLE_URL; required)",
    )
    found.add_argument(
        "--token",
        default=os.environ.get("PRICKLE_TOKEN"),
        help="the agent's (or person's) token every tool acts with (default: "
        "$PRICKLE_TOKEN); over streamable HTTP a request's Authorization: Bearer header "
        "takes its place",
    )
    found.add_argument(
        "--transport",
        choices=("stdio", "streamable-http"),
        default="stdio",
        help="stdio (default: one client, this process's stdin/stdout) or streamable-http "
        "(served at http://HOST:PORT/mcp)",
    )
    found.add_argument(
        "--host", default="127.0.0.1", help="streamable-http: the address to listen on"
    )
    found.add_argument(
        "--port", type=int, default=8765, help="streamable-http: the port (default 8765)"
    )
    found.add_argument("--version", action="version", version=f"prickle-mcp {version()}")
    return found


def main(argv: list[str] | None = None) -> None:
    arguments = parser()
    args = arguments.parse_args(argv)
    if not args.url:
        arguments.error("--url (or PRICKLE_URL) is required: the task server's /graphql URL")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per GraphQL request
    try:
        server = build_server(args.url, args.token)
    except PrickleError as error:
        arguments.exit(2, f"prickle-mcp: could not read the task verbs at {args.url}: {error}\n")
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)
