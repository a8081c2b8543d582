"""docs/frontends.md's code, run as it is written there: relay-compiler 20 compiles the
Relay documents against schema.graphql; Apollo Client and urql, in node, page every task of
a project against a real `prickle serve`, refetch one through `node(id:)`, and Apollo
Client follows the project's events from a cursor over graphql-ws, across a dropped
connection.

Each code block of the page whose info string names a file (```js apollo/client.mjs) is
written to that file, and the test's own script imports it. The npm packages are installed
by the test itself, once: relay-compiler into `.cache/npm-relay/`, the clients into
`.cache/npm-frontends/` (gitignored); where node or npm is missing the tests skip and say
so, except under CI (`CI=true` or `PRICKLE_REQUIRE_NPM=1`), where that fails the run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import npm
import pytest
from graphql import build_schema, parse, validate
from server import ROOT, ROUTE_HANDOFF, Server, routed_task

pytestmark = pytest.mark.once  # the clients are the subject: the same on either backend

DOC = ROOT / "docs" / "frontends.md"
SCHEMA = ROOT / "schema.graphql"
RELAY = ("relay-compiler@20", "graphql@16")
CLIENTS = (
    "@apollo/client@4",
    "graphql@16",
    "rxjs@7",
    "graphql-ws@6",
    "ws@8",
    "@urql/core@6",
    "@urql/exchange-graphcache@9",
)
PACKET = {"task": "Show me", "deliverable_type": "code", "acceptance_criteria": ["shown"]}
PAGE = 4
TASKS = 10  # more than two pages


def snippets(prefix: str) -> dict[str, str]:
    """The page's code blocks that name a file under `prefix`, by that file's path."""
    text = DOC.read_text()
    found = re.findall(r"^```\w+ (\S+)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    return {path: body for path, body in found if path.startswith(prefix)}


def _written(directory: Path, files: dict[str, str], modules: Path) -> Path:
    for path, body in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
    (directory / "node_modules").symlink_to(modules, target_is_directory=True)
    return directory


def test_relay_compiler_compiles_the_board_documents(tmp_path: Path) -> None:
    modules = npm.installed("relay", RELAY, "relay-compiler")
    files = snippets("relay/")
    assert {"relay/relay.config.json", "relay/src/Board.js"} <= set(files)
    project = _written(tmp_path, files, modules) / "relay"
    shutil.copyfile(SCHEMA, project / "schema.graphql")
    done = subprocess.run(
        [str(modules / ".bin" / "relay-compiler")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"relay-compiler failed:\n{done.stdout}\n{done.stderr}"
    # what Relay will send validates against the schema: the pagination queries it wrote
    # (pageInfo, first/after, last/before) and the card's refetch through node(id:)
    schema = build_schema(SCHEMA.read_text())
    sent = {}
    for artifact in (project / "src" / "__generated__").glob("*Query.graphql.js"):
        text = re.search(r'"text": ("(?:[^"\\]|\\.)*")', artifact.read_text())
        assert text, artifact.name
        sent[artifact.name] = json.loads(text.group(1))
    assert "node(id: $id)" in sent["BoardCardRefetchQuery.graphql.js"]
    assert "last: $count, before: $cursor" in sent["BoardTimelinePaginationQuery.graphql.js"]
    for name, operation in sent.items():
        assert validate(schema, parse(operation)) == [], name


APOLLO = r"""
import WebSocket from "ws";
import { gql } from "@apollo/client";
import { prickleClient } from "./apollo/client.mjs";
import { everyTask, refetchTask, TASK_NODE } from "./apollo/tasks.mjs";
import { follow } from "./apollo/events.mjs";

const [url, wsUrl, token, project, first, after, replayed, cancel, later] = process.argv.slice(2);
const say = (line) => console.log(JSON.stringify(line));
let requests = 0;  // HttpLink's requests, through node's global fetch
const fetched = globalThis.fetch;
globalThis.fetch = (...args) => { requests += 1; return fetched(...args); };
const sockets = [];  // the WebSockets graphql-ws opens, so that one can be dropped
class Tracked extends WebSocket {
  constructor(...args) { super(...args); sockets.push(this); }
}
const client = prickleClient({ url, wsUrl, token, webSocketImpl: Tracked });
const tasks = await everyTask(client, project, Number(first));
say({ tasks: tasks.map((task) => task.id), requests });
// node(id:) of a task the pages brought: answered by the cache, no request
const cached = await client.query({ query: TASK_NODE, variables: { id: cancel } });
say({ cached: cached.data.node, requests });
say({ node: await refetchTask(client, cancel), requests });
const CANCEL = gql`mutation($id: ID!) {
  cancel_task(task_id: $id, reason: "enough") { id state version } }`;
const events = [];
await new Promise((resolve, reject) => {
  const following = follow(client, project, after, async (event) => {
    events.push(event);
    if (events.length === Number(replayed)) {  // the log replayed from the cursor: now a move
      await client.mutate({ mutation: CANCEL, variables: { id: cancel } });
    }
    if (event.task_id === cancel && event.to_state === "cancelled") {
      // the connection drops; graphql-ws reconnects and subscribes again with the first
      // variables: the log is replayed from the first cursor, and what was seen is skipped
      sockets.at(-1).close(4000, "dropped");
      await client.mutate({ mutation: CANCEL, variables: { id: later } });
    }
    if (event.task_id === later && event.to_state === "cancelled") {
      following.stop();
      resolve();
    }
  }, reject);
});
say({ events: events.map((event) => event.cursor), sockets: sockets.length });
say({ node: await refetchTask(client, cancel) });
client.stop();
process.exit(0);
"""

URQL = r"""
import WebSocket from "ws";
import { gql } from "@urql/core";
import { prickleUrql } from "./urql/client.mjs";
import { everyTask } from "./urql/tasks.mjs";

const [url, wsUrl, token, project, first, id] = process.argv.slice(2);
let requests = 0;  // the fetchExchange's requests, through node's global fetch
const fetched = globalThis.fetch;
globalThis.fetch = (...args) => { requests += 1; return fetched(...args); };
const client = prickleUrql({ url, wsUrl, token, webSocketImpl: WebSocket });
const tasks = await everyTask(client, project, Number(first));
console.log(JSON.stringify({ tasks: tasks.map((task) => task.id), requests }));
// node(id:) of a task the pages brought: answered by Graphcache, no request
const NODE = gql`query($id: ID!) { node(id: $id) { __typename id ... on Task { state } } }`;
const found = await client.query(NODE, { id }).toPromise();
console.log(JSON.stringify({ node: found.data.node, requests }));
process.exit(0);
"""


@pytest.fixture(scope="module")
def clients() -> Path:
    return npm.installed("frontends", CLIENTS, "@urql/exchange-graphcache")


@pytest.fixture(scope="module")
def project(api_server: Server) -> tuple[list[str], str]:
    """TASKS tasks in project `front`, made by alice/planner; their ids and its token."""
    _, tokens = routed_task(api_server, PACKET)  # in project `work`
    planner = tokens["alice/planner"]
    handoff = {"project": "front", "assignee": "bob/coder", "packet": PACKET}
    made = [
        api_server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]["id"]
        for _ in range(TASKS)
    ]
    return made, planner


def _node(directory: Path, script: str, *args: str) -> list[dict[str, Any]]:
    (directory / "run.mjs").write_text(script)
    done = subprocess.run(
        ["node", "run.mjs", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"node failed:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def _urls(server: Server) -> tuple[str, str]:
    return server.graphql_url, server.ws_url


def test_apollo_client_pages_every_task_follows_events_and_refetches_a_node(
    tmp_path: Path, api_server: Server, clients: Path, project: tuple[list[str], str]
) -> None:
    made, token = project
    page = '{ task_events(project: "front") { edges { cursor } } }'
    history = [e["cursor"] for e in api_server.data(page, token=token)["task_events"]["edges"]]
    after = history[4]  # resume after the fifth event: the rest is replayed, then live
    directory = _written(tmp_path, snippets("apollo/"), clients)
    lines = _node(
        directory,
        APOLLO,
        *_urls(api_server),
        token,
        "front",
        str(PAGE),
        after,
        str(len(history) - 5),
        made[1],
        made[2],
    )
    paged, cached, refetched, followed, moved = lines
    assert paged == {"tasks": made, "requests": 3}  # every task, each once, over three pages
    assert cached["requests"] == 3 and cached["cached"]["id"] == made[1]
    assert refetched["requests"] == 4 and refetched["node"] == cached["cached"]
    before, events, after_move = refetched["node"], followed["events"], moved["node"]
    assert before == {
        "__typename": "Task",
        "id": made[1],
        "state": "routed",
        "version": 2,
        "display_title": None,
    }
    assert events[: len(history) - 5] == history[5:]  # replayed from the cursor, no gap
    # then the move, live; then, over a new connection, the next move: each event once
    assert len(events) == len(set(events)) == len(history) - 5 + 2
    assert events == sorted(events, key=int) and followed["sockets"] == 2
    assert (after_move["state"], after_move["version"]) == ("cancelled", 3)


def test_urql_pages_every_task_with_graphcache(
    tmp_path: Path, api_server: Server, clients: Path, project: tuple[list[str], str]
) -> None:
    made, token = project
    directory = _written(tmp_path, snippets("urql/"), clients)
    # made[3]: a task the Apollo test leaves as it was (it cancels made[1] and made[2])
    lines = _node(directory, URQL, *_urls(api_server), token, "front", "3", made[3])
    assert lines == [
        {"tasks": made, "requests": 4},  # every task, each once, over four pages
        {"node": {"__typename": "Task", "id": made[3], "state": "routed"}, "requests": 4},
    ]
