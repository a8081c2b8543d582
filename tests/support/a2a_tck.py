"""What the A2A conformance kit (a2aproject/a2a-tck) is run with against `prickle serve`
(docs/a2a.md, "Conformance"): the kit sends no credentials, and expects an agent that does
what each message's `messageId` prefix says.

    python -m tests.a2a_tck proxy --listen 9999 --to http://127.0.0.1:8000 --token prk_…
    python -m tests.a2a_tck worker --server http://127.0.0.1:8000 --agent alice/coder \
        --agent-token prk_… --owner-token prk_…

`proxy`: every request passed on to the server with `Authorization: Bearer <token>` added
(its Host kept, so that the card names the proxy's address); answers streamed back.
`worker`: the agent, over GraphQL only: it takes each task routed to it and moves it as
the message's prefix asks (its messageId read by the agent's own GetTask; the kit's
scenarios/*.feature): `tck-input-required` waits on
a question (and completes once answered), `tck-reject-task` is denied by the owner,
`test-resubscribe` works ten seconds, any other completes with the text the kit expects
as its summary (a file URL as `link` evidence, which A2A shows as a URL part).
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

import httpx

TEXTS = {
    "tck-artifact-text": "Generated text content",
    "tck-stream-001": "Stream hello from TCK",
    "tck-stream-003": "Stream task lifecycle",
    "tck-stream-ordering": "Ordered output",
    "tck-stream-artifact-text": "Streamed text content",
    "tck-stream-artifact-chunked": "chunk-1 chunk-2",
}
ROUTED = """query($a: String) { tasks(assignee: $a, state: routed, first: 100) {
  edges { node { id } } } }"""
TASK = "query($id: ID!) { task(id: $id) { id state version } }"
MOVE = "mutation($id: ID!) {{ {verb}(task_id: $id) {{ id version }} }}"
ASK = """mutation($id: ID!) { wait_on(task_id: $id, on: human,
  question: "the kit's input, please") { id } }"""
DENY = 'mutation($id: ID!) { deny_task(task_id: $id, reason: "rejected") { id } }'
RESULT = "mutation($id: ID!, $r: ResultInput!) { return_result(task_id: $id, result: $r) { id } }"


class Worker:
    def __init__(self, server: str, agent: str, agent_token: str, owner_token: str) -> None:
        self.url, self.agent = f"{server}/graphql", agent
        self.agent_token, self.owner_token = agent_token, owner_token
        self.seen: set[str] = set()

    def gql(self, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token or self.agent_token}"}
        body = {"query": query, "variables": variables}
        answer = httpx.post(self.url, json=body, headers=headers, timeout=30).json()
        if answer.get("errors"):
            print("refused:", answer["errors"][0].get("message"), flush=True)
        return answer.get("data")

    def run(self) -> None:
        while True:
            try:
                self.round()
            except httpx.HTTPError as error:  # the server restarting: try again
                print("unreachable:", error, flush=True)
            time.sleep(0.1)

    def round(self) -> None:
        """Each task newly routed to the agent, worked in a thread of its own."""
        found = self.gql(ROUTED, {"a": self.agent}) or {"tasks": {"edges": []}}
        for edge in found["tasks"]["edges"]:
            task = edge["node"]
            if task["id"] not in self.seen:
                self.seen.add(task["id"])
                key = self.message_id(task["id"])
                threading.Thread(target=self.work, args=(task["id"], key), daemon=True).start()

    def message_id(self, task_id: str) -> str:
        """The messageId the task was asked with (GraphQL does not show the assignee its
        idempotency key; the agent's own A2A GetTask does, as its history's first message)."""
        base = self.url.removesuffix("/graphql") + "/a2a/" + self.agent
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        headers = {"Authorization": f"Bearer {self.agent_token}", "A2A-Version": "1.0"}
        got = httpx.post(base, json=body, headers=headers, timeout=30).json()
        return str(got.get("result", {}).get("history", [{}])[0].get("messageId", ""))

    def work(self, task_id: str, key: str) -> None:
        if key.startswith("tck-reject"):
            self.gql(DENY, {"id": task_id}, self.owner_token)
            return
        for verb in ("accept_task", "start_task"):
            self.gql(MOVE.format(verb=verb), {"id": task_id})
        if key.startswith("tck-input-required"):
            self.gql(ASK, {"id": task_id})
            while (self.gql(TASK, {"id": task_id}) or {}).get("task", {}).get("state") != "working":
                time.sleep(0.2)  # until the kit's answer (or forever: it may cancel instead)
        if key.startswith("test-resubscribe"):
            time.sleep(10)
        self.gql(RESULT, {"id": task_id, "r": result(key)})


def result(key: str) -> dict[str, Any]:
    text = next((t for p, t in TEXTS.items() if key.startswith(p)), "Hello from TCK")
    evidence: dict[str, Any] = {"kind": "note", "summary": text, "criteria": [0]}
    if key.startswith(("tck-artifact-file", "tck-stream-artifact-file")):
        url = "https://example.com/output.txt"
        evidence = {"kind": "link", "summary": "output.txt", "url": url, "criteria": [0]}
    return {"summary": text, "provenance": "agent_generated", "evidence": [evidence]}


def proxy(listen: int, to: str, token: str) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    client = httpx.AsyncClient(base_url=to, timeout=None)

    async def passed(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k != "authorization"]
        headers.append(("authorization", f"Bearer {token}"))
        sent = client.build_request(
            request.method,
            request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            headers=headers,
            content=await request.body(),
        )
        answer = await client.send(sent, stream=True)
        kept = {
            k: v for k, v in answer.headers.items() if k not in ("content-length", "date", "server")
        }
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers=kept,
            background=None,
        )

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH"]
    app = Starlette(routes=[Route("/{path:path}", passed, methods=methods)])
    uvicorn.run(app, host="127.0.0.1", port=listen, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.a2a_tck")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("proxy")
    p.add_argument("--listen", type=int, default=9999)
    p.add_argument("--to", required=True)
    p.add_argument("--token", required=True)
    w = commands.add_parser("worker")
    w.add_argument("--server", required=True)
    w.add_argument("--agent", required=True)
    w.add_argument("--agent-token", required=True)
    w.add_argument("--owner-token", required=True)
    args = parser.parse_args()
    if args.command == "proxy":
        proxy(args.listen, args.to, args.token)
    else:
        Worker(args.server, args.agent, args.agent_token, args.owner_token).run()


if __name__ == "__main__":
    main()
