"""The scale seeder (tests/bench/scale.py) writes the rows the server writes: for a copied
task of every shape, the same lifecycle driven again through the service's verbs, in the
same place (project, requester, assignee, parent, dependencies), writes the same rows, column
by column, ids and moments aside; and it writes into no table the seeder leaves out."""

from __future__ import annotations

import re
from typing import Any

import orjson
from sqlalchemy import text

from app.storage.store import Store
from app.storage.tables import metadata
from tests.bench import scale

_ULID = re.compile(scale._ULID)
_TIME = re.compile(scale._TIME)


def _normal(rows: list[tuple[str, list[Any]]], kept: set[str]) -> list[tuple[str, list[Any]]]:
    """Each id but those `kept` named by its order of appearance, each moment alike, seqs
    dropped."""
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        found = match.group(0)
        return found if found in kept else names.setdefault(found, f"<id{len(names)}>")

    out = []
    for table, values in rows:
        if table == "events":
            values = values[1:]
        normal = []
        for value in values:
            if isinstance(value, (dict, list)):
                value = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
            if isinstance(value, str):
                value = _TIME.sub("<time>", _ULID.sub(name, value))
            normal.append(value)
        out.append((table, normal))
    return out


def _differences(a: list[tuple[str, list[Any]]], b: list[tuple[str, list[Any]]]) -> list[Any]:
    """(table, row, column, copied, served) where they differ; the tables of the rows
    where their numbers differ."""
    if [t for t, _ in a] != [t for t, _ in b]:
        return [[t for t, _ in a], [t for t, _ in b]]
    return [
        (table, i, j, x, y)
        for i, ((table, row), (_, other)) in enumerate(zip(a, b, strict=True))
        for j, (x, y) in enumerate(zip(row, other, strict=True))
        if x != y
    ]


async def _counts(store: Store) -> dict[str, int]:
    async with store.engine.connect() as conn:
        return {
            t: (await conn.execute(text(f"SELECT count(*) FROM {t}"))).scalar_one()
            for t in metadata.tables
        }


async def test_seeded_rows_equal_those_the_verbs_write(database_url: str) -> None:
    seeded = await scale.seed(database_url, 500, keep=True, log=lambda _: None)
    assert len(seeded.copies) > 300
    sample: dict[tuple[str, bool], str] = {}
    for task_id, (shape, placed) in seeded.copies.items():
        sample.setdefault((shape, placed.parent is not None), task_id)
    assert {shape for shape, _ in sample} == set(scale.SHAPES)
    store = Store(database_url)
    try:
        for task_id in sample.values():
            shape, placed = seeded.copies[task_id]
            before = await _counts(store)
            again = await scale.drive(store, scale.SHAPES[shape], placed)
            after = await _counts(store)
            written = {t for t in after if after[t] != before[t]}
            assert written <= {t for t, _ in scale.TABLES}, shape
            kept = {*placed.depends_on, *([placed.parent] if placed.parent else [])}
            copied = _normal(await scale._rows_of(store, task_id), kept)
            served = _normal(await scale._rows_of(store, again.id), kept)
            assert _differences(copied, served) == [], shape
    finally:
        await store.close()
