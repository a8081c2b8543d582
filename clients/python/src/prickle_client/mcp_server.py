"""`prickle-mcp`: the task server's moves as MCP tools, for LLM agents.

    prickle-mcp --url http://127.0.0.1:8000/graphql --token $PRICKLE_TOKEN      # stdio
    prickle-mcp --url ... --transport streamable-http --port 8765             # HTTP, /mcp

Every tool acts as the agent whose token the server holds (`--token`, or PRICKLE_TOKEN);
over streamable HTTP a request's own `Authorization: Bearer <token>` takes its place, so
several agents can share one MCP server. Tools talk to prickle through `AsyncClient`.
A refused move comes back as a tool error: its code, the server's message, and what to do.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
except ModuleNotFoundError as missing:  # the client installed without its `mcp` extra
    message = "prickle-mcp needs the MCP SDK: pip install 'prickle-client[mcp]'"
    raise ModuleNotFoundError(message) from missing
from pydantic import Field, ValidationError, WithJsonSchema

from . import shapes
from ._async import AsyncClient, Task
from .errors import PrickleError, RateLimited

T = TypeVar("T")

INSTRUCTIONS = """\
Prickle hands tasks between agents. A task you were handed: list_my_tasks, then
accept_task, start_task, save_checkpoint as you go, and return_result with evidence that
names the acceptance criteria it covers (or hand_back if you cannot do it). To give work to
another agent: handoff. Every task carries `allowed_verbs`: the moves you may make now."""

NEXT_STEP = {
    "invalid_state": "The task is not in a state that allows this move. Call get_task and "
    "make one of the moves in its allowed_verbs instead.",
    "forbidden": "You may not make this move on this task. Call get_task to see the moves "
    "you may make (allowed_verbs).",
    "not_found": "No such task (or agent) is visible to you. Check the id with "
    "list_my_tasks, or the agent's name with its owner.",
    "invalid_input": "Fix the arguments as the message says, then call the tool again.",
    "unauthenticated": "The token was refused. The MCP server needs a valid agent token "
    "(--token, PRICKLE_TOKEN, or an Authorization header over HTTP).",
    "conflict": "The task changed since you read it. Call get_task and retry with its "
    "current version as expected_version, if the move still makes sense.",
    "turn_budget_exhausted": "The task's turn budget is spent: return_result with what you "
    "have, or hand_back.",
    "rate_limited": "Too many moves at once; nothing changed. Wait, then call again.",
    "query_too_complex": "The request was too large. Send shorter text.",
    "internal": "The task server failed. Try again later; nothing may have changed.",
}

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
        "`acceptance_criteria` (1 to 20 checkable statements; a result's evidence must "
        "cover each by its index); optionally `context`, `files`, `depends_on`."
    ),
]
Checkpoint = Annotated[
    dict[str, Any],
    WithJsonSchema(shapes.checkpoint()),
    Field(
        description="Where the work stands: `progress` (required), `decisions`, "
        "`files_touched`, `next_steps`, `open_questions`, `needs_answer`."
    ),
]
Result = Annotated[
    dict[str, Any],
    WithJsonSchema(shapes.result()),
    Field(
        description="The result: `summary`, `provenance` (usually agent_generated) and "
        "`evidence`, a list of items {kind, summary, criteria: [indexes of the acceptance "
        "criteria it shows are met], url or content}; every criterion needs evidence. "
        "Give a `submission_id` of your own to make a retry safe."
    ),
]


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


def tool_error_text(error: PrickleError) -> str:
    text = f"{error.code}: {error.message}"
    if error.code == "invalid_state" and error.extensions.get("state"):
        text += f" (the task is {error.extensions['state']})"
    if isinstance(error, RateLimited) and error.retry_after is not None:
        text += f" (retry after {error.retry_after:g} s)"
    return f"{text}. {NEXT_STEP.get(error.code, NEXT_STEP['internal'])}"


def view(task: Task) -> dict[str, Any]:
    """The task as a tool returns it: the protocol's object, its version and your moves."""
    return {**task.as_protocol, "version": task.version, "allowed_verbs": task.allowed_verbs}


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


def build_server(url: str, token: str | None) -> MCPServer:
    """The MCP server of the task server at `url` (its /graphql endpoint)."""
    server = MCPServer("prickle", instructions=INSTRUCTIONS)
    agents = Agents(url, token)
    _task_tools(server, agents)
    _move_tools(server, agents)
    _resources(server, agents)
    return server


def _moves(
    agents: Agents, ctx: Context | None, move: Callable[[AsyncClient], Awaitable[Task]]
) -> Awaitable[dict[str, Any]]:
    async def run() -> dict[str, Any]:
        return view(await refused_as_tool_error(move(agents.client(ctx))))

    return run()


def _task_tools(server: MCPServer, agents: Agents) -> None:
    @server.tool()
    async def list_my_tasks(
        ctx: Context,
        role: Annotated[
            Literal["assignee", "requester"],
            Field(description="assignee: tasks handed to you; requester: tasks you handed off."),
        ] = "assignee",
        state: Annotated[
            str | None,
            Field(description="Only tasks in this state (e.g. routed: new work to accept)."),
        ] = None,
        project: Annotated[str | None, Field(description="Only tasks of this project.")] = None,
    ) -> list[dict[str, Any]]:
        """List your tasks, oldest first, each with its state and the moves you may make
        (allowed_verbs). New work handed to you is in state `routed`: accept_task it."""
        client = agents.client(ctx)
        me = (await refused_as_tool_error(client.me())).id
        assignee, requester = (me, None) if role == "assignee" else (None, me)
        found = client.tasks(project=project, state=state, assignee=assignee, requester=requester)
        return [summary(task) async for task in found]

    @server.tool()
    async def get_task(ctx: Context, task_id: TaskId) -> dict[str, Any]:
        """The whole task: its packet (what is asked, the acceptance criteria), state,
        latest checkpoint, result, version and the moves you may make (allowed_verbs)."""
        task = await refused_as_tool_error(agents.client(ctx).task(task_id))
        if task is None:
            raise ToolError(f"not_found: no task {task_id}. {NEXT_STEP['not_found']}")
        return view(task)

    @server.tool()
    async def handoff(
        ctx: Context,
        project: Annotated[str, Field(description="The project the task belongs to.")],
        assignee: Annotated[str, Field(description="The agent to hand it to: owner/name.")],
        packet: Packet,
        display_title: Annotated[str | None, Field(description="A short title.")] = None,
        turn_budget: Annotated[
            int | None, Field(description="How many turns (moves, checkpoints) it may take.")
        ] = None,
        parent_task_id: Annotated[
            str | None, Field(description="The task this one is a subtask of.")
        ] = None,
        idempotency_key: Annotated[
            str | None,
            Field(description="A key of your own: a retry with it returns the same task."),
        ] = None,
    ) -> dict[str, Any]:
        """Hand a task to another agent. Its owner's permission gate routes it (state
        `routed`), holds it for the owner's approval (`waiting`), or rejects it."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.handoff(
                project,
                assignee,
                packet,
                display_title=display_title,
                turn_budget=turn_budget,
                parent_task_id=parent_task_id,
                idempotency_key=idempotency_key,
            ),
        )


def _move_tools(server: MCPServer, agents: Agents) -> None:
    @server.tool()
    async def accept_task(
        ctx: Context, task_id: TaskId, expected_version: ExpectedVersion = None
    ) -> dict[str, Any]:
        """Take on a task handed to you (state `routed`); it becomes `accepted`."""
        return await _moves(
            agents, ctx, lambda c: c.accept_task(task_id, expected_version=expected_version)
        )

    @server.tool()
    async def start_task(
        ctx: Context, task_id: TaskId, expected_version: ExpectedVersion = None
    ) -> dict[str, Any]:
        """Start working on an accepted task; it becomes `working`."""
        return await _moves(
            agents, ctx, lambda c: c.start_task(task_id, expected_version=expected_version)
        )

    @server.tool()
    async def save_checkpoint(
        ctx: Context,
        task_id: TaskId,
        checkpoint: Checkpoint,
        expected_version: ExpectedVersion = None,
    ) -> dict[str, Any]:
        """Record where your work stands (replaces the task's latest checkpoint; spends one
        turn; the task stays where it is). Save one before a long step."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.save_checkpoint(task_id, checkpoint, expected_version=expected_version),
        )

    @server.tool()
    async def wait_on(
        ctx: Context,
        task_id: TaskId,
        on: Annotated[
            Literal["human", "agent"],
            Field(description="human: a person must answer; agent: the agent named in `agent`."),
        ],
        question: Annotated[str | None, Field(description="What you need answered.")] = None,
        agent: Annotated[
            str | None, Field(description="With on=agent: the agent to wait on (owner/name).")
        ] = None,
        expected_version: ExpectedVersion = None,
    ) -> dict[str, Any]:
        """Pause your task until someone answers your question; it becomes `waiting`."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.wait_on(task_id, on, question, agent, expected_version=expected_version),
        )

    @server.tool()
    async def return_result(
        ctx: Context, task_id: TaskId, result: Result, expected_version: ExpectedVersion = None
    ) -> dict[str, Any]:
        """Return your result with evidence for each acceptance criterion. The requester's
        result policy judges it at once: `completed`, `approval` (a person reviews it), or
        back to `working` when evidence is missing (see result.evidence_report)."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.return_result(task_id, result, expected_version=expected_version),
        )

    @server.tool()
    async def hand_back(
        ctx: Context,
        task_id: TaskId,
        reason: Annotated[str, Field(description="Why you give the task back.")],
        checkpoint: Annotated[
            dict[str, Any] | None,
            WithJsonSchema({"anyOf": [shapes.checkpoint(), {"type": "null"}]}),
            Field(description="Where the work stands, for whoever takes it next."),
        ] = None,
        expected_version: ExpectedVersion = None,
    ) -> dict[str, Any]:
        """Give a task back to its requester (declined, or you cannot finish it); it
        becomes `returned`, and the requester may route it again."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.hand_back(task_id, reason, checkpoint, expected_version=expected_version),
        )

    @server.tool()
    async def cancel_task(
        ctx: Context,
        task_id: TaskId,
        reason: Annotated[str | None, Field(description="Why it is called off.")] = None,
        expected_version: ExpectedVersion = None,
    ) -> dict[str, Any]:
        """Call off a task you requested; it becomes `cancelled` (final)."""
        return await _moves(
            agents,
            ctx,
            lambda c: c.cancel_task(task_id, reason, expected_version=expected_version),
        )


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="prickle-mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("PRICKLE_URL"), required=False)
    parser.add_argument("--token", default=os.environ.get("PRICKLE_TOKEN"))
    parser.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("--url (or PRICKLE_URL) is required: the task server's /graphql URL")
    server = build_server(args.url, args.token)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per GraphQL request
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)
