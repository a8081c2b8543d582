"""`python -m tests.bench.at_scale --database-url URL [--runs 30]`

Every operation of a year of work against a real `prickle serve` on a database seeded by
`tests.bench.scale`: for each, the median milliseconds of `--runs` requests made one after
another, and the CPU the server process and (on PostgreSQL) the database's backends spent
per request (from /proc, so on this machine only), printed as a table and as JSON
(`--json FILE`) for `--compare`, which prints each cost of one file over another's.

The viewer is `owner00`, who founded `project000` (a tenth of the tasks) and sees all of it;
the lifecycle is `owner00/agent00`'s handoff to `owner07/agent00` in project000.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy import text

from app.domain.principals import agent, person
from app.service import admin
from app.storage.store import Store
from tests.support.server import Server, start

CARD = """id project state waiting_on assignee requester display_title version
    created_at updated_at parent_task_id packet { task deliverable_type }"""
ASKED = "kind verb from_state to_state waiting_on actor at note"
TASK = "query($id: ID!) { task(id: $id) { id state version packet { task } result { summary } } }"
PAGE = """query($project: String, $state: TaskState, $assignee: String, $after: String) {
  tasks(project: $project, state: $state, assignee: $assignee, first: 50, after: $after) {
    page_info { has_next_page end_cursor } edges { node { id state assignee } } } }"""
COUNT = """query($project: String, $state: TaskState) {
  tasks(project: $project, state: $state, first: 50) { total_count edges { node { id } } } }"""
VERBS_PAGE = """query($project: String, $state: TaskState) {
  tasks(project: $project, state: $state, first: 50) { edges { node { id allowed_verbs } } } }"""
GRAPH = """query($id: ID!) { task_graph(task_id: $id, depth: 4) {
  tasks { id state } edges { kind from_id to_id } } }"""
EVENTS = """query($task_id: ID, $project: String, $after: String) {
  task_events(task_id: $task_id, project: $project, after: $after, first: 50) {
    page_info { has_next_page end_cursor } edges { node { cursor kind to_state } } } }"""
BOARD = f"""query BoardPage($project: String, $after: String) {{
    tasks(project: $project, first: 500, after: $after) {{
      total_count pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {CARD} }} }} }} }}"""
INBOX = f"""query BoardInbox($first: Int!, $after: String) {{
    inbox(first: $first, after: $after) {{ total_count pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{ {CARD} events {{ {ASKED} }} }} }} }} }}"""
BATCHES = """subscription($after: String) {
  task_event_batches(after: $after, batch_size: 1000) { cursor } }"""
RESUMED = 100_000  # events a subscription resumes from


def mutation(verb: str, args: str) -> str:
    return f"mutation {{ {verb}(task_id: $ID, {args}) {{ id version state }} }}"


LIFECYCLE = [
    ("accept_task", "assignee", ""),
    ("start_task", "assignee", ""),
    (
        "save_checkpoint",
        "assignee",
        'checkpoint: {progress: "wrote the handler", next_steps: ["document it"]}',
    ),
    ("wait_on", "assignee", 'on: human, question: "Which port?"'),
    ("answer", "owner", 'answer: "8000"'),
    (
        "return_result",
        "assignee",
        'result: {summary: "done", provenance: agent_generated, evidence: [{kind: test_output,'
        ' summary: "the tests pass", criteria: [0, 1]}]}',
    ),
]
HANDOFF = """mutation { handoff(input: {
  project: "project000", assignee: "owner07/agent00", packet: {
  task: "Add a health check endpoint", deliverable_type: code,
  acceptance_criteria: ["GET /health answers 200", "it is documented"]}}) { id version state } }"""


def ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@dataclass
class Meter:
    """CPU of the server process and of the database's backends, in milliseconds."""

    server: Server
    database: str | None  # PostgreSQL's database name; None on SQLite
    admin: asyncpg.Connection | None = None
    backends: list[int] = field(default_factory=list)

    async def refresh(self) -> None:
        if self.admin is not None:
            rows = await self.admin.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                self.database,
            )
            self.backends = [r["pid"] for r in rows]

    def now(self) -> tuple[float, float]:
        hz = os.sysconf("SC_CLK_TCK")
        db = 0
        for pid in self.backends:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # ended since
                db += ticks(pid)
        return ticks(self.server.process.pid) * 1000 / hz, db * 1000 / hz


@dataclass
class Cost:
    ms: float
    server_cpu: float
    db_cpu: float


class Bench:
    def __init__(self, server: Server, meter: Meter, tokens: dict[str, str], runs: int) -> None:
        self.server, self.meter, self.tokens, self.runs = server, meter, tokens, runs
        self.client = httpx.Client(timeout=300)
        self.found: dict[str, Cost] = {}
        self.resumed = 0  # the events a resumed subscription received

    def post(self, query: str, variables: dict[str, Any], who: str = "owner") -> dict[str, Any]:
        response = self.client.post(
            self.server.graphql_url,
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
        )
        body = response.json()
        assert not body.get("errors"), body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def measure(self, name: str, once: Callable[[], Any], runs: int | None = None) -> None:
        runs = runs or self.runs
        for _ in range(2):
            once()  # warm
        await self.meter.refresh()
        times = []
        cpu0 = self.meter.now()
        for _ in range(runs):
            started = time.perf_counter()
            once()
            times.append((time.perf_counter() - started) * 1000)
        cpu1 = self.meter.now()
        self.found[name] = Cost(
            statistics.median(times), (cpu1[0] - cpu0[0]) / runs, (cpu1[1] - cpu0[1]) / runs
        )
        print(f"{name}: {self.found[name]}", file=sys.stderr, flush=True)

    async def lifecycle(self) -> None:
        """Each verb of a lifecycle, `runs` lifecycles, the verbs' CPU summed per verb."""
        await self.meter.refresh()
        times: dict[str, list[float]] = {v: [] for v in ["handoff", *(s[0] for s in LIFECYCLE)]}
        cpu = {v: [0.0, 0.0] for v in times}
        for _ in range(self.runs + 2):
            steps = [("handoff", HANDOFF, "requester")]
            for verb, who, args in LIFECYCLE:
                steps.append((verb, mutation(verb, args), who))
            task_id = ""
            for verb, query, who in steps:
                query = query.replace("$ID", json.dumps(task_id))
                before = self.meter.now()
                started = time.perf_counter()
                data = self.post(query, {}, who)
                times[verb].append((time.perf_counter() - started) * 1000)
                after = self.meter.now()
                cpu[verb][0] += after[0] - before[0]
                cpu[verb][1] += after[1] - before[1]
                task_id = task_id or data["handoff"]["id"]
        for verb, spent in times.items():
            self.found[verb] = Cost(
                statistics.median(spent[2:]),
                cpu[verb][0] / len(spent),
                cpu[verb][1] / len(spent),
            )
            print(f"{verb}: {self.found[verb]}", file=sys.stderr, flush=True)

    async def resume(self, after: int) -> None:
        """A subscription resuming `RESUMED` events back, over SSE, in batches of 1,000."""

        async def once() -> None:
            body = {"query": BATCHES, "variables": {"after": str(after)}}
            headers = {
                "Accept": "text/event-stream",
                "Authorization": f"Bearer {self.tokens['owner']}",
            }
            seen = 0
            timeout = httpx.Timeout(300, read=300)
            async with (
                httpx.AsyncClient(timeout=timeout) as client,
                client.stream("POST", self.server.graphql_url, json=body, headers=headers) as r,
            ):
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        batch = line.count('"cursor"')
                        seen += batch
                        if batch < 1000:  # a list not full: caught up
                            break
            self.resumed = seen

        runs = 3
        await self.meter.refresh()
        times = []
        cpu0 = self.meter.now()
        for _ in range(runs):
            started = time.perf_counter()
            await once()
            times.append((time.perf_counter() - started) * 1000)
        cpu1 = self.meter.now()
        name = "subscription resuming 100,000 events back (batches of 1,000)"
        self.found[name] = Cost(
            statistics.median(times), (cpu1[0] - cpu0[0]) / runs, (cpu1[1] - cpu0[1]) / runs
        )
        print(f"{name}: {self.found[name]}, {self.resumed} events", file=sys.stderr, flush=True)


@dataclass
class Sample:
    """What the operations read: found in the seeded database."""

    old_task: str
    assignee: str
    last_cursor: str  # the cursor before project000's last page
    root: str  # a root with a tree below it
    leaf: str  # the deepest task of a tree
    old_seq: int  # an early cursor in project000's events
    head: int
    tasks: int
    events: int


async def sample(store: Store) -> Sample:
    async with store.engine.connect() as conn:

        async def one(sql: str) -> Any:
            return (await conn.execute(text(sql))).scalar_one()

        tasks = await one("SELECT count(*) FROM tasks")
        big = await one("SELECT count(*) FROM tasks WHERE project = 'project000'")
        leaf = await one(
            "SELECT id FROM tasks WHERE project = 'project000' AND parent_task_id IS NOT NULL"
            " ORDER BY id DESC LIMIT 1"
        )
        root = leaf
        while True:
            parent = await one(f"SELECT parent_task_id FROM tasks WHERE id = '{root}'")
            if parent is None:
                break
            root = parent
        return Sample(
            old_task=await one(
                f"SELECT id FROM tasks WHERE project = 'project000' ORDER BY id"
                f" LIMIT 1 OFFSET {big // 10}"
            ),
            assignee="owner07/agent03",
            last_cursor=await one(
                "SELECT id FROM tasks WHERE project = 'project000' ORDER BY id DESC"
                " LIMIT 1 OFFSET 50"
            ),
            root=root,
            leaf=leaf,
            old_seq=await one(
                "SELECT seq FROM events WHERE project = 'project000' ORDER BY seq"
                f" LIMIT 1 OFFSET {big}"
            ),
            head=await one("SELECT max(seq) FROM events"),
            tasks=tasks,
            events=await one("SELECT count(*) FROM events"),
        )


async def tokens(store: Store) -> dict[str, str]:
    made = {}
    for name, who in [
        ("owner", person("owner00")),
        ("requester", agent("owner00/agent00")),
        ("assignee", agent("owner07/agent00")),
        ("assignee_owner", person("owner07")),
    ]:
        made[name] = (await admin.provision_token(store, who, label="bench")).token
    return made


async def bench(url: str, runs: int, only: list[str] | None) -> dict[str, Any]:
    store = Store(url)
    try:
        found = await sample(store)
        made = await tokens(store)
    finally:
        await store.close()
    print(f"{found}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="prickle-at-scale-") as logs:
        server = start(url, Path(logs))
        database = None if url.startswith("sqlite") else url.rsplit("/", 1)[1]
        meter = Meter(server, database)
        if database is not None:
            dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
            meter.admin = await asyncpg.connect(dsn)
        b = Bench(server, meter, made, runs)
        try:
            await _operations(b, found, only)
        finally:
            server.stop()
            if meter.admin is not None:
                await meter.admin.close()
    return {
        "tasks": found.tasks,
        "events": found.events,
        "costs": {name: vars(cost) for name, cost in b.found.items()},
    }


async def _operations(b: Bench, s: Sample, only: list[str] | None) -> None:
    def query(q: str, v: dict[str, Any], who: str = "owner") -> Callable[[], Any]:
        return lambda: b.post(q, v, who)

    ops: list[tuple[str, Callable[[], Any]]] = [
        ("task(id)", query(TASK, {"id": s.old_task})),
        (
            "tasks: 50 by project + state",
            query(PAGE, {"project": "project000", "state": "working"}),
        ),
        ("tasks: 50 by assignee", query(PAGE, {"assignee": s.assignee})),
        (
            "tasks: the last page of project000 by cursor",
            query(PAGE, {"project": "project000", "after": s.last_cursor}),
        ),
        (
            "tasks with total_count (project000, completed)",
            query(COUNT, {"project": "project000", "state": "completed"}),
        ),
        ("task_graph depth 4 from a root", query(GRAPH, {"id": s.root})),
        ("task_graph depth 4 from a leaf", query(GRAPH, {"id": s.leaf})),
        ("task_events of a task", query(EVENTS, {"task_id": s.old_task})),
        (
            "task_events of project000 after an old cursor",
            query(EVENTS, {"project": "project000", "after": str(s.old_seq)}),
        ),
        ("board: first page of project000 (500 cards)", query(BOARD, {"project": "project000"})),
        ("inbox (owner07)", query(INBOX, {"first": 50}, "assignee_owner")),
        ("inbox (owner00)", query(INBOX, {"first": 50})),
        (
            "allowed_verbs on a page of 50",
            query(VERBS_PAGE, {"project": "project000", "state": "working"}),
        ),
    ]
    for name, once in ops:
        if only is None or any(o in name for o in only):
            await b.measure(name, once)
    if only is None or "lifecycle" in only:
        await b.lifecycle()
    if only is None or "subscription" in only:
        await b.resume(max(s.head - RESUMED, 0))


def table(results: dict[str, Any]) -> str:
    lines = [
        f"{results['tasks']:,} tasks, {results['events']:,} events",
        "| operation | ms (median) | server CPU ms | database CPU ms |",
        "|---|---|---|---|",
    ]
    for name, c in results["costs"].items():
        lines.append(f"| {name} | {c['ms']:.1f} | {c['server_cpu']:.1f} | {c['db_cpu']:.1f} |")
    return "\n".join(lines)


def compare(small: dict[str, Any], large: dict[str, Any]) -> str:
    lines = [
        f"| operation | {small['tasks']:,} ms | {large['tasks']:,} ms | ratio | server CPU"
        " ratio | database CPU ratio |",
        "|---|---|---|---|---|---|",
    ]
    for name, c in large["costs"].items():
        a = small["costs"].get(name)
        if a is None:
            continue
        cpu = (c["server_cpu"] + 0.5) / (a["server_cpu"] + 0.5)
        db = (c["db_cpu"] + 0.5) / (a["db_cpu"] + 0.5)
        lines.append(
            f"| {name} | {a['ms']:.1f} | {c['ms']:.1f} | {c['ms'] / a['ms']:.2f} | {cpu:.2f} |"
            f" {db:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.at_scale")
    parser.add_argument("--database-url")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--only", nargs="*", help="operations whose name contains one of these")
    parser.add_argument("--json", help="write the costs to this file")
    parser.add_argument("--compare", nargs=2, metavar=("SMALL", "LARGE"))
    args = parser.parse_args()
    if args.compare:
        small, large = (json.loads(Path(p).read_text()) for p in args.compare)
        print(compare(small, large))
        return
    results = asyncio.run(bench(args.database_url, args.runs, args.only))
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
