"""A page of tasks as one PostgreSQL statement that builds the JSON of the answer.

The selection (`Selection`: response keys, field names and the selections below them) is
turned into nested `json_build_object` / `json_agg` calls over the tasks table: the page,
its edges and nodes, each node's parent, children and dependencies at any depth, the page
info and the total count, all in one statement. `json` (not `jsonb`) keeps the keys in the
order given, so the answer's fields come in selection order.

Every level applies visibility in SQL: `app.storage.visibility.visible`, compiled once per
viewer kind and table alias with the principal as the bound parameters `who` and
`who_prefix`. The statement's text depends only on the selection, the viewer kind and
which filters are given; it is built once per such shape and kept.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.util import ClauseAdapter

from app.domain import events
from app.domain.principals import Principal
from app.domain.reads import TaskFilters
from app.settings import current
from app.storage.repositories.tasks import tasks
from app.storage.tx import Tx
from app.storage.visibility import visible

# A selection: (response key, field name, the selection below it or None), in order.
Selection = tuple[tuple[str, str, "Selection | None"], ...]

SCALARS = frozenset(
    {
        "id",
        "project",
        "state",
        "waiting_on",
        "requester",
        "assignee",
        "parent_task_id",
        "created_at",
        "updated_at",
        "origin_message_id",
        "display_title",
        "turn_budget",
        "version",
    }
)
RELATIONS = frozenset({"parent", "children", "dependencies"})
# A task's lists, read from their tables (results and checkpoints from their JSON bodies),
# and what of each the statement builds: the fields named, each list below by its own.
RESULT = frozenset(
    {
        "summary",
        "provenance",
        "returned_by",
        "returned_at",
        "submission_id",
        "revision",
        "status",
        "decided_by_policy",
        "reason",
        "provenance_status",
    }
)
RESULT_LISTS = {
    "evidence": (
        "Evidence",
        frozenset(
            {
                "kind",
                "summary",
                "url",
                "content",
                "criteria",
                "artifact",
                "observed_at",
                "verifier",
            }
        ),
    ),
    "artifacts": ("Artifact", frozenset({"ref", "sha256", "commit_sha"})),
    "verdicts": ("Verdict", frozenset({"criterion", "accepted", "note"})),
}
CHECKPOINT = frozenset({"id", "task_id", "sha256", "agent", "handed_back", "created_at"})
CHECKPOINT_BODY = frozenset(
    {"progress", "decisions", "files_touched", "next_steps", "open_questions", "needs_answer"}
)
EVENT = frozenset({"cursor", *events.FIELDS})
LISTS = frozenset({"results", "checkpoints", "events"})
_EVENT_COLUMNS = ", ".join(events.FIELDS)
FILTERS = ("project", "state", "assignee", "requester", "parent_task_id")
MAX_KEYS = 50  # json_build_object takes at most 100 arguments
KEPT_STATEMENTS = 512

_WHO = "\x00who"
_BINDS = {_WHO: ":who", f"{_WHO}/": ":who_prefix"}


@cache
def _visible(person: bool, alias: str) -> str:
    """The visibility condition on the tasks aliased `alias`, with :who (and :who_prefix)."""
    condition = visible(Principal("person" if person else "agent", _WHO))
    adapted = ClauseAdapter(tasks.alias(alias)).traverse(condition)
    dialect = postgresql.dialect(paramstyle="named")  # type: ignore[no-untyped-call]
    compiled = adapted.compile(dialect=dialect)
    sql = str(compiled).replace("::VARCHAR", "")  # `:who::VARCHAR` is no bound name in text()
    for name, value in compiled.params.items():
        bound = _BINDS.get(value) or _literal(value)  # the principal, or a constant
        sql = re.sub(rf":{re.escape(name)}\b", bound, sql)
    return f"({sql})"


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass
class _Builder:
    person: bool
    count: int = 0

    def alias(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def visible(self, alias: str) -> str:
        return _visible(self.person, alias)

    def object(self, selection: Selection, value: Any) -> str:
        parts = [f"{_literal(key)}, {value(name, below)}" for key, name, below in selection]
        return f"json_build_object({', '.join(parts)})"

    def task(self, selection: Selection, t: str) -> str:
        def value(name: str, below: Selection | None) -> str:
            if name == "__typename":
                return "'Task'"
            if name in SCALARS:
                return f"{t}.{name}"
            assert below is not None
            if name in LISTS:
                return self.listed(name, below, t)
            return self.related(name, below, t)

        return self.object(selection, value)

    def listed(self, name: str, below: Selection, t: str) -> str:
        """A list of the task aliased `t`, in the order its loader reads it. The task is
        visible (its level said so), and so is what it holds."""
        a = self.alias()
        if name == "results":
            item = self.object(below, partial(self.result, f"{a}.body"))
            source, order = f"results {a} WHERE {a}.task_id = {t}.id", f"{a}.revision"
        elif name == "checkpoints":
            item = self.object(below, partial(self.checkpoint, a))
            source, order = f"checkpoints {a} WHERE {a}.task_id = {t}.id", f"{a}.id"
        else:
            item = self.object(below, partial(self.event, a))
            source, order = (
                f"(SELECT {_EVENT_COLUMNS} FROM events WHERE task_id = {t}.id UNION ALL"
                f" SELECT {_EVENT_COLUMNS} FROM events_archive WHERE task_id = {t}.id) {a}",
                f"{a}.seq",
            )
        return f"(SELECT coalesce(json_agg({item} ORDER BY {order}), '[]'::json) FROM {source})"

    def result(self, body: str, name: str, below: Selection | None) -> str:
        """A field of a result revision, from its body, as `Result.from_domain` reads it."""
        if name == "__typename":
            return "'Result'"
        if below is None:
            return f"({body} -> '{name}')"
        typename, _ = RESULT_LISTS[name]
        e = self.alias()

        def field(key: str, _: Selection | None) -> str:
            return f"'{typename}'" if key == "__typename" else f"({e}.v -> '{key}')"

        items = (
            f"(SELECT coalesce(json_agg({self.object(below, field)} ORDER BY {e}.n), '[]'::json)"
            f" FROM jsonb_array_elements({body} -> '{name}') WITH ORDINALITY AS {e}(v, n))"
        )
        if name == "evidence":  # always there; the others are null when left out
            return items
        return f"(CASE WHEN jsonb_typeof({body} -> '{name}') = 'array' THEN {items} END)"

    def checkpoint(self, c: str, name: str, below: Selection | None) -> str:
        if name == "__typename":
            return "'SavedCheckpoint'"
        if below is None:
            return f"{c}.{name}"

        def field(key: str, _: Selection | None) -> str:
            return "'Checkpoint'" if key == "__typename" else f"({c}.body -> '{key}')"

        return self.object(below, field)

    @staticmethod
    def event(e: str, name: str, below: Selection | None) -> str:
        if name == "__typename":
            return "'TaskEvent'"
        if name == "cursor":
            return f"{e}.seq::text"
        return f"{e}.{name}"

    def related(self, name: str, below: Selection, t: str) -> str:
        a = self.alias()
        node = self.task(below, a)
        if name == "parent":
            return (
                f"(SELECT {node} FROM tasks {a}"
                f" WHERE {a}.id = {t}.parent_task_id AND {self.visible(a)})"
            )
        if name == "children":
            return (
                f"(SELECT coalesce(json_agg({node} ORDER BY {a}.id), '[]'::json) FROM tasks {a}"
                f" WHERE {a}.parent_task_id = {t}.id AND {self.visible(a)})"
            )
        d, names = f"d{self.count}", f"{t}.packet -> 'depends_on'"
        return (
            f"(SELECT coalesce(json_agg({node} ORDER BY {d}.n), '[]'::json)"
            f" FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof({names}) = 'array'"
            f" THEN {names} ELSE '[]'::jsonb END) WITH ORDINALITY AS {d}(name, n)"
            f" JOIN tasks {a} ON {a}.id = {d}.name WHERE {self.visible(a)})"
        )

    def page(self, selection: Selection, given: tuple[str, ...], after: bool) -> str:
        where = [self.visible("t0"), *(f"t0.{f} = :{f}" for f in given)]
        if after:
            where.append("t0.id > :after")
        counted = [self.visible("c"), *(f"c.{f} = :{f}" for f in given)]

        def value(name: str, below: Selection | None) -> str:
            if name == "__typename":
                return "'TaskConnection'"
            if name == "total_count":
                cap = current().count_cap  # counting stops past it, as on the plain path
                return (
                    f"(SELECT least(count(*), {cap}) FROM (SELECT 1 FROM tasks c"
                    f" WHERE {' AND '.join(counted)} ORDER BY c.id LIMIT {cap + 1}) c)"
                )
            assert below is not None
            if name == "edges":
                edge = self.object(below, self.edge)
                return (
                    f"(SELECT coalesce(json_agg({edge} ORDER BY t0.id), '[]'::json)"
                    " FROM (SELECT * FROM page ORDER BY id LIMIT :first) t0)"
                )
            return self.object(below, partial(self.page_info, after))

        return (
            f"WITH page AS (SELECT t0.* FROM tasks t0 WHERE {' AND '.join(where)}"
            f" ORDER BY t0.id LIMIT :limit) SELECT ({self.object(selection, value)})::text"
        )

    def edge(self, name: str, below: Selection | None) -> str:
        if name == "__typename":
            return "'TaskEdge'"
        if name == "cursor":
            return "t0.id"
        assert below is not None
        return self.task(below, "t0")

    @staticmethod
    def page_info(after: bool, name: str, below: Selection | None) -> str:
        if name == "__typename":
            return "'PageInfo'"
        if name in ("hasNextPage", "has_next_page"):
            return "((SELECT count(*) FROM page) > :first)"
        if name == "hasPreviousPage":  # read forward: whether `after` was given
            return "true" if after else "false"
        least = "min" if name == "startCursor" else "max"
        return f"(SELECT {least}(id) FROM (SELECT id FROM page ORDER BY id LIMIT :first) e)"


_statements: OrderedDict[tuple[Any, ...], TextClause] = OrderedDict()


def statement(
    selection: Selection, person: bool, given: tuple[str, ...], after: bool
) -> TextClause:
    """The statement for this shape, built once (the most recent KEPT_STATEMENTS kept)."""
    key = (selection, person, given, after)
    found = _statements.pop(key, None)
    if found is None:
        found = text(_Builder(person).page(selection, given, after))
    _statements[key] = found
    if len(_statements) > KEPT_STATEMENTS:
        _statements.popitem(last=False)
    return found


async def task_page_json(
    tx: Tx,
    principal: Principal,
    filters: TaskFilters,
    first: int,
    after: str | None,
    selection: Selection,
) -> Mapping[str, Any]:
    """The page of visible tasks matching the filters after `after`, as the JSON value of
    a TaskConnection with this selection (PostgreSQL only)."""
    if filters.state_in is not None or filters.updated_after is not None:
        raise ValueError("the compiled page takes the API's equality filters only")
    given = tuple(f for f in FILTERS if getattr(filters, f) is not None)
    params: dict[str, Any] = {f: getattr(filters, f) for f in given}
    params.update(who=principal.id, first=first, limit=first + 1)
    if principal.is_person:
        params["who_prefix"] = f"{principal.id}/"
    if after is not None:
        params["after"] = after
    stmt = statement(selection, principal.is_person, given, after is not None)
    if any(field[1] == "total_count" for field in selection):
        # the count planned for its filters, as the plain path's (`count_tasks`)
        await tx.custom_plans()
    row = await tx.one(stmt, params)
    found: Mapping[str, Any] = json.loads(row[0])
    return found
