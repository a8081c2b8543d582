"""A remote A2A agent for the tests: a real `a2a-sdk` server (its JSON-RPC routes, its card,
its in-memory task store) started as a process on 127.0.0.1.

What the agent does is chosen by the first word of the task's text:

- `complete`: works, adds an artifact (tied to criterion 0 by its metadata), completes.
- `ask`: asks "Which colour?" (INPUT_REQUIRED); the answer becomes its artifact.
- `fail`: fails with "cannot do that".
- `slow`: works until the file named by A2A_REMOTE_RELEASE exists, then completes.
- `hold`: answers the SendMessage only once that file exists (the task is made then), then
  completes.

Every message it receives is appended to the file named by A2A_REMOTE_LOG, one JSON line
each (`message_id`, `task_id`, `context_id`), so that a test counts sends across restarts of
Prickle. `--no-streaming` serves a card without streaming (Prickle then polls GetTask).

    with RemoteAgent(tmp_path) as remote:
        remote.card_url, remote.messages()
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent


class RemoteAgent:
    """The server as a subprocess, on a free port, until the block ends."""

    def __init__(self, directory: Path, streaming: bool = True, credential: str = "") -> None:
        self.directory = directory
        self.log = directory / "remote-messages.jsonl"
        self.release = directory / "remote-release"
        self.streaming = streaming
        self.credential = credential
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def card_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/.well-known/agent-card.json"

    def __enter__(self) -> RemoteAgent:
        sys.path.insert(0, str(HERE))
        from server import free_port

        self.port = free_port()
        self._start()
        return self

    def restart(self) -> None:
        """A new process on the same port: the tasks it had are forgotten."""
        self.__exit__()
        self._start()

    def _start(self) -> None:
        env = {
            **os.environ,
            "A2A_REMOTE_LOG": str(self.log),
            "A2A_REMOTE_RELEASE": str(self.release),
            "A2A_REMOTE_CREDENTIAL": self.credential,
        }
        args = [sys.executable, str(HERE / "a2a_remote.py"), str(self.port)]
        if not self.streaming:
            args.append("--no-streaming")
        with open(self.directory / "remote-output", "wb") as out:
            self.process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.card_url, timeout=2).status_code in (200, 401):
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError((self.directory / "remote-output").read_text())

    def __exit__(self, *_: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(10)

    def messages(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def let_go(self) -> None:
        """The `slow` agents finish."""
        self.release.write_text("go")


# the server process


def _serve(port: int, streaming: bool) -> None:
    import uvicorn
    from a2a.helpers.proto_helpers import (
        get_message_text,
        new_task_from_user_message,
        new_text_message,
        new_text_part,
    )
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Role,
        TaskState,
    )
    from starlette.applications import Starlette
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse

    log = Path(os.environ["A2A_REMOTE_LOG"])
    release = Path(os.environ["A2A_REMOTE_RELEASE"])
    credential = os.environ.get("A2A_REMOTE_CREDENTIAL", "")

    class Agent(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            message = context.message
            assert message is not None
            with log.open("a") as out:
                seen = {"message_id": message.message_id, "context_id": message.context_id}
                out.write(json.dumps({**seen, "task_id": message.task_id}) + "\n")
            task = context.current_task
            if task is None and get_message_text(message).startswith("hold"):
                while not release.exists():
                    await asyncio.sleep(0.05)
            if task is None:
                task = new_task_from_user_message(message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            first = get_message_text(task.history[0]) if task.history else ""
            kind = (first or get_message_text(message)).split(" ", 1)[0]

            def says(text: str) -> Any:
                return new_text_message(
                    text, context_id=task.context_id, task_id=task.id, role=Role.ROLE_AGENT
                )

            if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                answer = get_message_text(message)
                await updater.add_artifact(
                    [new_text_part(f"colour: {answer}")], name="choice", metadata={"criteria": [0]}
                )
                await updater.complete(says(f"painted it {answer}"))
                return
            await updater.start_work(says("on it"))
            if kind == "ask":
                await updater.requires_input(says("Which colour?"))
            elif kind == "fail":
                await updater.failed(says("cannot do that"))
            else:
                if kind == "slow":
                    while not release.exists():
                        await asyncio.sleep(0.05)
                await updater.add_artifact(
                    [new_text_part("the report, all tests pass")],
                    name="report",
                    metadata={"criteria": [0]},
                )
                await updater.complete(says("done"))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            task = context.current_task
            assert task is not None
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()

    card = AgentCard(
        name="remote",
        description="a remote agent of the tests",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="work", name="work", description="does it", tags=["test"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Agent(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]

    class Bearer(BaseHTTPMiddleware):
        async def dispatch(self, request: Any, call_next: Any) -> Any:
            wanted = f"Bearer {credential}"
            if credential and request.headers.get("authorization") != wanted:
                return JSONResponse({"error": "unauthorized"}, status_code=401)
            return await call_next(request)

    app = Starlette(routes=routes)
    app.add_middleware(Bearer)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    _serve(int(sys.argv[1]), "--no-streaming" not in sys.argv)
