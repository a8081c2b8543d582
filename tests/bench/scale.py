"""`python -m tests.bench.scale --tasks N [--database-url URL]`

Fills a fresh database (migrated here) with N tasks shaped like a year of work, made of the
rows the server writes:

- 20 owners (`owner00`…), 10 agents each (`owner00/agent00`…), each owner's gate allowing
  every request but holding `screenshots` for the owner's approval, and each owner's results
  of `doc` tasks waiting for its approval; 100 projects of uneven size (`project000` holds a
  tenth of the tasks: 100,000 of a million), each worked on by three owners;
- trees of subtasks up to depth 6, `depends_on` edges to earlier tasks of the project;
- every state in proportions a year would leave: most tasks ended long ago (completed,
  cancelled, rejected), the newest still open in every position; checkpoints, results with
  evidence and about 10 events per task.

How the rows are the server's: each shape of lifecycle (`SHAPES`) is first driven through
the service's verbs, in this database, on a few tasks of its own (the *templates*, kept, and
so are the first task of every project, which founds it). Every other task is a copy of its
shape's template rows (the task, its events, checkpoints, results, approvals, task_links)
with the task's own ids, principals, project, parent, dependencies, times and event seqs put
in. The scale seeder's test drives the same lifecycles for seeded tasks again, through the
service, and compares the rows column by column (ids and times aside).

PostgreSQL takes the copies by COPY (asyncpg's `copy_records_to_table`), SQLite by
executemany, a few thousand tasks per transaction. Without `--database-url`, a new
PostgreSQL database `prickle_scale_<N>` on the tests' server (replaced if it exists), or
with `--sqlite FILE` that file.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import text

from app.domain.clock import rfc3339
from app.domain.principals import Principal, agent, person
from app.domain.task import Task
from app.service import admin
from app.service.inputs import GateRuleInput, ResultRuleInput
from app.storage.migrate import upgrade
from app.storage.store import Store
from tests.support.factory import call, give, packet

OWNERS = 20
AGENTS = 10  # per owner
PROJECTS = 100
BIG_SHARE = 0.1  # project000's share of the tasks
MAX_DEPTH = 6
HELD = "screenshots"  # the deliverable every owner's gate holds
REVIEWED = "doc"  # the deliverable whose results wait for the requester's owner
BATCH = 5000  # tasks per transaction
YEAR = timedelta(days=365)

# (table, the column naming the task): what a task's lifecycle writes, in the order the
# foreign keys allow
TABLES = (
    ("tasks", "id"),
    ("task_links", None),
    ("events", "task_id"),
    ("checkpoints", "task_id"),
    ("results", "task_id"),
    ("approvals", "task_id"),
)


def owner(i: int) -> str:
    return f"owner{i:02d}"


def agent_id(i: int, j: int) -> str:
    return f"{owner(i)}/agent{j:02d}"


def project(k: int) -> str:
    return f"project{k:03d}"


def team(k: int) -> tuple[int, int, int]:
    """The three owners whose agents work in project k."""
    return (k % OWNERS, (k + 7) % OWNERS, (k + 13) % OWNERS)


# --- the shapes: each a lifecycle, as (verb, who acts, arguments) after the handoff --------

Who = str  # "assignee", "assignee_owner", "requester", "requester_owner"
Step = tuple[str, Who, dict[str, Any]]

_ACCEPT: Step = ("accept_task", "assignee", {})
_START: Step = ("start_task", "assignee", {})
_CHECKPOINTS = [
    ("save_checkpoint", "assignee", {"checkpoint": {"progress": p, "next_steps": [n]}})
    for p, n in [
        ("read the code around the change", "write the handler"),
        ("wrote the handler and its test", "document it"),
        ("documented it in the README", "run the whole suite"),
    ]
]
_ASK: Step = ("wait_on", "assignee", {"on": "human", "question": "Which port should it use?"})
_ANSWER: Step = ("answer", "requester_owner", {"answer": "8000, as the others"})
_RESULT: Step = ("return_result", "assignee", {})
_RUN = [_ACCEPT, _START, *_CHECKPOINTS[:2]]


@dataclass(frozen=True)
class Shape:
    name: str
    steps: list[Step]
    deliverable: str = "code"


SHAPES = {
    s.name: s
    for s in [
        Shape(
            "completed",
            [_ACCEPT, _START, *_CHECKPOINTS[:2], _ASK, _ANSWER, _CHECKPOINTS[2], _RESULT],
        ),
        Shape(
            "completed_reviewed",
            [*_RUN, _RESULT, ("decide_result", "requester_owner", {"decision": "accept"})],
            REVIEWED,
        ),
        Shape(
            "completed_held",
            [("approve_handoff", "assignee_owner", {"reason": "fine"}), *_RUN, _RESULT],
            HELD,
        ),
        Shape("cancelled", [*_RUN, ("cancel_task", "requester", {"reason": "not needed now"})]),
        Shape("rejected", [("deny_task", "assignee_owner", {"reason": "not this quarter"})], HELD),
        Shape("routed", []),
        Shape("accepted", [_ACCEPT]),
        Shape("working", _RUN),
        Shape("waiting_human", [*_RUN, _ASK]),
        Shape(
            "waiting_agent",
            [
                *_RUN,
                (
                    "wait_on",
                    "assignee",
                    {"on": "agent", "agent": "$requester", "question": "Which API?"},
                ),
            ],
        ),
        Shape("waiting_stopped", [*_RUN, ("stop_run", "assignee_owner", {"reason": "pausing"})]),
        Shape("waiting_approval", [], HELD),
        Shape("approval", [*_RUN, _RESULT], REVIEWED),
        Shape("returned", [_ACCEPT, ("hand_back", "assignee", {"reason": "not mine to do"})]),
    ]
}

# what a task's shape is, by how old it is: long ended, or among the newest and still open
ENDED = {
    "completed": 70,
    "completed_reviewed": 12,
    "completed_held": 3,
    "cancelled": 8,
    "rejected": 4,
    "working": 1,
    "returned": 1,
    "waiting_human": 1,
}
RECENT = {
    "completed": 20,
    "routed": 10,
    "accepted": 8,
    "working": 20,
    "waiting_human": 8,
    "waiting_agent": 5,
    "waiting_stopped": 4,
    "waiting_approval": 5,
    "approval": 10,
    "returned": 5,
    "cancelled": 5,
}
RECENT_SHARE = 0.05


@dataclass
class Cast:
    """The principals' names, and each owner's standing rules' ids."""

    allow: dict[str, str] = field(default_factory=dict)  # owner -> its gate's allow rule
    hold: dict[str, str] = field(default_factory=dict)
    review: dict[str, str] = field(default_factory=dict)  # owner -> its result rule


@dataclass(frozen=True)
class Placed:
    """Where a task stands among the others: who asks, who does it, in which tree."""

    project: str
    requester: str
    assignee: str
    parent: str | None
    depends_on: tuple[str, ...]


def _actor(who: Who, placed: Placed) -> Principal:
    return {
        "assignee": lambda: agent(placed.assignee),
        "assignee_owner": lambda: person(placed.assignee.split("/")[0]),
        "requester": lambda: agent(placed.requester),
        "requester_owner": lambda: person(placed.requester.split("/")[0]),
    }[who]()


async def drive(store: Store, shape: Shape, placed: Placed) -> Task:
    """A task through `shape`'s lifecycle, by the service's verbs, where `placed` says."""
    task = await give(
        store,
        by=agent(placed.requester),
        project=placed.project,
        assignee=placed.assignee,
        parent_task_id=placed.parent,
        packet=packet(
            task=f"{shape.name.replace('_', ' ')}: add a health check endpoint",
            deliverable_type=shape.deliverable,
            depends_on=list(placed.depends_on),
        ),
    )
    for verb, who, kw in shape.steps:
        args = {k: placed.requester if v == "$requester" else v for k, v in kw.items()}
        task = await call(store, verb, _actor(who, placed), task.id, **args)
    return task


async def set_up(store: Store) -> Cast:
    """The owners, their agents and standing rules, through the service."""
    cast = Cast()
    for i in range(OWNERS):
        me = person(owner(i))
        for j in range(AGENTS):
            await admin.register_agent(store, me, f"agent{j:02d}")
        allow = await admin.set_gate_rule(store, me, GateRuleInput(effect="allow"))
        hold = GateRuleInput(effect="hold", priority=10, deliverable_type=HELD)
        review = ResultRuleInput(policy="require_approval", deliverable_type=REVIEWED)
        cast.allow[owner(i)] = allow.id
        cast.hold[owner(i)] = (await admin.set_gate_rule(store, me, hold)).id
        cast.review[owner(i)] = (await admin.set_result_rule(store, me, review)).id
    return cast


# --- templates: a driven task's rows, with the parts that vary made format fields ----------

_ULID = r"[0-9A-HJKMNP-TV-Z]{26}"
_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"


@dataclass
class Template:
    """A driven task's rows, each value a constant or a format string over the task's fields
    (`T`: its id, `P` its parent, `D0`/`D1` its dependencies, `ra`/`ro` its requester and
    owner, `aa`/`ao` its assignee and owner, `pr` its project, `gA`/`gH`/`rR` the rules, `t<k>`
    its k-th moment, `x<k>` the k-th other id it made)."""

    rows: list[tuple[str, list[Any], list[tuple[int, str]]]]  # table, values, formatted
    moments: int
    fresh: int
    events: int


def _program(value: Any, known: dict[str, str], order: dict[str, str]) -> Any:
    if isinstance(value, (dict, list)):
        value = orjson.dumps(value).decode()
    if not isinstance(value, str):
        return value
    pattern = "|".join(
        [*(re.escape(k) for k in sorted(known, key=len, reverse=True)), _ULID, _TIME]
    )
    pieces = re.split(f"({pattern})", value)
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            out.append(piece.replace("{", "{{").replace("}", "}}"))
        elif piece in known:
            out.append("{" + known[piece] + "}")
        else:
            out.append("{" + order.setdefault(piece, f"?{piece}") + "}")
    return "".join(out)


async def template_of(store: Store, task: Task, placed: Placed, cast: Cast) -> Template:
    """`task`'s rows as a template (it was driven where `placed` says)."""
    ro, ao = placed.requester.split("/")[0], placed.assignee.split("/")[0]
    known = {
        task.id: "T",
        placed.requester: "ra",
        placed.assignee: "aa",
        ro: "ro",
        ao: "ao",
        placed.project: "pr",
        cast.allow[ao]: "gA",
        cast.hold[ao]: "gH",
        cast.review[ro]: "rR",
    }
    if placed.parent:
        known[placed.parent] = "P"
    for k, dep in enumerate(placed.depends_on):
        known[dep] = f"D{k}"
    rows = await _rows_of(store, task.id)
    order: dict[str, str] = {}
    programs = []
    for table, values in rows:
        made = [_program(v, known, order) for v in values]
        programs.append((table, made))
    # name the moments in time order and the other ids in order of appearance
    moments = sorted(p[1:] for p in order.values() if re.fullmatch(f"\\?{_TIME}", p))
    ids = [p[1:] for p in order.values() if not re.fullmatch(f"\\?{_TIME}", p)]
    names = {f"?{m}": f"t{k}" for k, m in enumerate(moments)}
    names.update({f"?{x}": f"x{k}" for k, x in enumerate(ids)})
    out = []
    for table, made in programs:
        values, formatted = [], []
        for i, v in enumerate(made):
            if isinstance(v, str) and "{" in v.replace("{{", ""):
                for old, new in names.items():
                    v = v.replace("{" + old + "}", "{" + new + "}")
                formatted.append((i, v))
                values.append(None)
            else:
                values.append(v.replace("{{", "{").replace("}}", "}") if isinstance(v, str) else v)
        out.append((table, values, formatted))
    events = sum(1 for t, _ in rows if t == "events")
    return Template(out, len(moments), len(ids), events)


async def _rows_of(store: Store, task_id: str) -> list[tuple[str, list[Any]]]:
    """Every row the task's lifecycle wrote, table by table, as the driver returns them."""
    found: list[tuple[str, list[Any]]] = []
    async with store.engine.connect() as conn:
        for table, column in TABLES:
            if column is None:
                # the steps written with the task (not those its subtasks and dependents add)
                where = (
                    "(src = :t AND way IN ('up', 'out')) OR (dst = :t AND way IN ('down', 'in'))"
                )
                order = "way, src, dst"
            else:
                where = f"{column} = :t"
                order = "seq" if table == "events" else ("revision" if table == "results" else "1")
            result = await conn.execute(
                text(f"SELECT * FROM {table} WHERE {where} ORDER BY {order}"), {"t": task_id}
            )
            found.extend((table, list(r)) for r in result.all())
    return found


def columns_of(store: Store) -> dict[str, list[str]]:
    from app.storage.tables import metadata

    return {t: [c.name for c in metadata.tables[t].c] for t, _ in TABLES}


# --- ids and moments ----------------------------------------------------------------------

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(ms: int, rand: int) -> str:
    value = (ms << 80) | (rand & ((1 << 80) - 1))
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


# --- where each task goes -----------------------------------------------------------------


class World:
    """Chooses each new task's project, principals, parent and dependencies."""

    def __init__(self, total: int, rng: random.Random) -> None:
        self.rng = rng
        weights = [1 / (k**0.9) for k in range(1, PROJECTS)]
        scale = (1 - BIG_SHARE) / sum(weights)
        self.cumulative = list(_accumulate([BIG_SHARE, *(w * scale for w in weights)]))
        # project -> its newest tasks: (id, assignee, depth, shape)
        self.recent: dict[str, list[tuple[str, str, int, str]]] = {}
        self.total = total

    def place(self) -> tuple[Placed, int]:
        """The next task's place and its depth in its tree."""
        rng = self.rng
        k = min(bisect.bisect(self.cumulative, rng.random()), PROJECTS - 1)
        name = project(k)
        recent = self.recent.setdefault(name, [])
        owners = team(k)
        parent, depth = None, 0
        if recent and rng.random() < 0.35:
            pid, passignee, pdepth, pshape = recent[rng.randrange(len(recent))]
            # a parent waiting on an agent would be resumed by its subtasks' ends: not copied
            if pdepth < MAX_DEPTH and pshape != "waiting_agent":
                parent, depth, requester = pid, pdepth + 1, passignee
        if parent is None:
            requester = agent_id(rng.choice(owners), rng.randrange(AGENTS))
        theirs = [o for o in owners if owner(o) != requester.split("/")[0]]
        assignee = agent_id(rng.choice(theirs), rng.randrange(AGENTS))
        deps: tuple[str, ...] = ()
        roll = rng.random()
        if recent and roll < 0.25:
            picks = 2 if roll < 0.05 and len(recent) > 1 else 1
            deps = tuple(t[0] for t in rng.sample(recent, picks))
        return Placed(name, requester, assignee, parent, deps), depth

    def made(self, placed: Placed, task_id: str, depth: int, shape: str) -> None:
        recent = self.recent.setdefault(placed.project, [])
        recent.append((task_id, placed.assignee, depth, shape))
        if len(recent) > 40:
            del recent[0]


def _accumulate(values: Sequence[float]) -> Iterator[float]:
    total = 0.0
    for v in values:
        total += v
        yield total


def shape_for(rng: random.Random, age: float) -> str:
    """`age`: 0 for the oldest task, 1 for the newest."""
    mix = RECENT if age > 1 - RECENT_SHARE else ENDED
    return rng.choices(list(mix), weights=list(mix.values()))[0]


# --- the seed -----------------------------------------------------------------------------


@dataclass
class Seeded:
    tasks: int
    events: int
    seconds: float
    templates: dict[tuple[str, bool, int], str]  # (shape, subtask, deps) -> template task id
    # with `keep`: each copied task's shape and place
    copies: dict[str, tuple[str, Placed]] = field(default_factory=dict)


async def _templates(
    store: Store, cast: Cast
) -> tuple[dict[tuple[str, bool, int], tuple[Template, str]], int]:
    """A template per shape, subtask or not, with 0, 1 or 2 dependencies: driven in project000."""
    root = Placed(project(0), agent_id(0, 0), agent_id(7, 0), None, ())
    base = await drive(store, SHAPES["working"], root)  # the subtasks' parent
    named = [(await drive(store, SHAPES["working"], root)).id for _ in range(2)]
    made: dict[tuple[str, bool, int], tuple[Template, str]] = {}
    count = 3
    for name, shape in SHAPES.items():
        for sub in (False, True):
            for deps in (0, 1, 2):
                placed = Placed(
                    project(0),
                    agent_id(7, 0) if sub else agent_id(0, 1),
                    agent_id(13, 0) if sub else agent_id(7, 1),
                    base.id if sub else None,
                    tuple(named[:deps]),
                )
                task = await drive(store, shape, placed)
                made[(name, sub, deps)] = (await template_of(store, task, placed, cast), task.id)
                count += 1
    return made, count


class Writer:
    """Rows to the database, a batch at a time."""

    def __init__(self, store: Store, url: str, columns: dict[str, list[str]]) -> None:
        self.store, self.url, self.columns = store, url, columns
        self.sqlite = url.startswith("sqlite")
        self.conn: Any = None
        self.indexes: list[Any] = []

    async def open(self) -> None:
        if not self.sqlite:
            import asyncpg

            dsn = self.url.replace("postgresql+asyncpg://", "postgresql://", 1)
            self.conn = await asyncpg.connect(dsn)
            # the copies' references are made in order (a task before its rows, a parent
            # before its subtasks), so the foreign keys' checks are left out: a third of the
            # time of a COPY (the tests' PostgreSQL user is a superuser)
            await self.conn.execute("SET session_replication_role = replica")
            await self.conn.execute("SET synchronous_commit = off")
            # and the tables' other indexes are built again at the end, from their own
            # definitions: building an index once is far cheaper than a million inserts
            self.indexes = await self.conn.fetch(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
                " AND tablename = ANY($1::text[]) AND indexname NOT IN"
                " (SELECT conname FROM pg_constraint)",
                [t for t, _ in TABLES],
            )
            for row in self.indexes:
                await self.conn.execute(f'DROP INDEX "{row["indexname"]}"')

    async def write(self, batch: dict[str, list[tuple[Any, ...]]]) -> None:
        if self.sqlite:
            async with self.store.engine.begin() as conn:
                for table, _ in TABLES:
                    rows = batch[table]
                    if rows:
                        names = self.columns[table]
                        marks = ", ".join("?" for _ in names)
                        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})"
                        await conn.exec_driver_sql(sql, rows)
            return
        async with self.conn.transaction():
            for table, _ in TABLES:
                if batch[table]:
                    await self.conn.copy_records_to_table(
                        table, records=batch[table], columns=self.columns[table]
                    )

    async def close(self, last_seq: int) -> None:
        if self.conn is not None:
            await self.conn.execute("SET maintenance_work_mem = '512MB'")
            for row in self.indexes:
                await self.conn.execute(row["indexdef"])
            await self.conn.execute("SELECT setval('events_seq', $1)", last_seq)
            await self.conn.execute("ANALYZE")
            await self.conn.close()
        else:
            async with self.store.engine.begin() as conn:
                await conn.exec_driver_sql("ANALYZE")


def _moments(created: datetime, count: int, rng: random.Random) -> list[str]:
    gap = timedelta(seconds=rng.randint(20, 900))
    return [rfc3339(created + gap * k) for k in range(count)]


async def seed(
    url: str, total: int, keep: bool = False, log: Callable[[str], None] = print
) -> Seeded:
    """Migrate the database at `url` and fill it with `total` tasks. `keep`: every shape in
    turn (not by age), and each copy's shape and place kept in the answer."""
    started = time.perf_counter()
    store = Store(url)
    try:
        await upgrade(store.engine)
        cast = await set_up(store)
        templates, made = await _templates(store, cast)
        rng = random.Random(1)
        world = World(total, rng)
        # every project founded by a task of its own, through the service
        for k in range(PROJECTS):
            placed = Placed(project(k), agent_id(team(k)[0], 0), agent_id(team(k)[1], 0), None, ())
            task = await drive(store, SHAPES["rejected"], placed)
            world.made(placed, task.id, 0, "rejected")
            made += 1
        async with store.engine.connect() as conn:
            seq = (await conn.execute(text("SELECT max(seq) FROM events"))).scalar_one()
        writer = Writer(store, url, columns_of(store))
        await writer.open()
        seeded = Seeded(total, 0, 0.0, {k: v[1] for k, v in templates.items()})
        first = datetime.now(UTC) - YEAR - timedelta(days=2)
        step = YEAR / max(total, 1)
        made_to = {"seq": seq}

        def batch_of(ns: range) -> dict[str, list[tuple[Any, ...]]]:
            """The rows of the tasks numbered `ns` (made in a thread, while the last batch
            is written)."""
            batch: dict[str, list[tuple[Any, ...]]] = {t: [] for t, _ in TABLES}
            for n in ns:
                placed, depth = world.place()
                name = list(SHAPES)[n % len(SHAPES)] if keep else shape_for(rng, n / total)
                key = (name, placed.parent is not None, len(placed.depends_on))
                template = templates[key][0]
                created = first + step * n
                ms = int(created.timestamp() * 1000)
                task_id = ulid(ms, rng.getrandbits(80))
                fields = _fields(task_id, placed, cast, template, created, ms, rng)
                made_to["seq"] = _copy(template, fields, made_to["seq"], batch)
                world.made(placed, task_id, depth, name)
                if keep:
                    seeded.copies[task_id] = (name, placed)
            return batch

        loop = asyncio.get_running_loop()
        writing: asyncio.Task[None] | None = None
        for low in range(made, total, BATCH):
            batch = await loop.run_in_executor(None, batch_of, range(low, min(low + BATCH, total)))
            if writing is not None:
                await writing
            writing = asyncio.create_task(writer.write(batch))
            if low // BATCH % 25 == 0:
                log(f"{low} tasks, {time.perf_counter() - started:.0f} s")
        if writing is not None:
            await writing
        seq = made_to["seq"]
        await writer.close(seq)
        async with store.engine.connect() as conn:
            seeded.events = (await conn.execute(text("SELECT count(*) FROM events"))).scalar_one()
        seeded.seconds = time.perf_counter() - started
        return seeded
    finally:
        await store.close()


def _fields(
    task_id: str,
    placed: Placed,
    cast: Cast,
    template: Template,
    created: datetime,
    ms: int,
    rng: random.Random,
) -> dict[str, str]:
    ro, ao = placed.requester.split("/")[0], placed.assignee.split("/")[0]
    fields = {
        "T": task_id,
        "P": placed.parent or "",
        "ra": placed.requester,
        "aa": placed.assignee,
        "ro": ro,
        "ao": ao,
        "pr": placed.project,
        "gA": cast.allow[ao],
        "gH": cast.hold[ao],
        "rR": cast.review[ro],
    }
    for k, dep in enumerate(placed.depends_on):
        fields[f"D{k}"] = dep
    for k, moment in enumerate(_moments(created, template.moments, rng)):
        fields[f"t{k}"] = moment
    for k in range(template.fresh):
        fields[f"x{k}"] = ulid(ms + 1 + k, rng.getrandbits(80))
    return fields


def _copy(
    template: Template, fields: dict[str, str], seq: int, batch: dict[str, list[tuple[Any, ...]]]
) -> int:
    for table, values, formatted in template.rows:
        row = list(values)
        for i, fmt in formatted:
            row[i] = fmt.format_map(fields)
        if table == "events":
            seq += 1
            row[0] = seq
        batch[table].append(tuple(row))
    return seq


# --- the command --------------------------------------------------------------------------


async def _fresh_postgres(total: int) -> str:
    from tests.bench.run import pg_admin
    from tests.support.server import PG_ADMIN

    name = f"prickle_scale_{total}"
    await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await pg_admin(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}"


async def _main(args: argparse.Namespace) -> None:
    if args.database_url:
        url = args.database_url
    elif args.sqlite:
        if os.path.exists(args.sqlite):
            os.remove(args.sqlite)
        url = f"sqlite+aiosqlite:///{args.sqlite}"
    else:
        url = await _fresh_postgres(args.tasks)
    seeded = await seed(url, args.tasks)
    print(f"{url}: {seeded.tasks} tasks, {seeded.events} events in {seeded.seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.scale")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--database-url", help="a database to fill (migrated here)")
    parser.add_argument("--sqlite", help="a SQLite file to (re)make and fill")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
