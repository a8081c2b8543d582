"""The protocol's shapes, for the MCP tools' input schemas: parts of task.schema.json.

schemas/task.schema.json is the protocol's task object, copied from the server's source by
generate.py; each input shape here is one of its properties, as a caller writes it (fields
the server fills in left out, fields with a default not required).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

RESULT_INPUT_FIELDS = ("summary", "evidence", "provenance", "submission_id", "artifacts")


@cache
def task_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schemas/task.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def _object(name: str) -> dict[str, Any]:
    """The object variant of the task's property `name` (which may be nullable)."""
    shape = task_schema()["properties"][name]
    objects = [s for s in shape.get("anyOf", [shape]) if s.get("type") == "object"]
    return dict(objects[0])


def _as_input(shape: dict[str, Any], fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The shape as a caller writes it: only `fields` (all if None); a field with a default
    or that may be null is not required, here and in the objects within."""
    properties = {
        k: _within(v) for k, v in shape["properties"].items() if fields is None or k in fields
    }
    required = [k for k in shape["required"] if k in properties and not _optional(properties[k])]
    return {**shape, "properties": properties, "required": required}


def _within(shape: dict[str, Any]) -> dict[str, Any]:
    if shape.get("type") == "object" and "properties" in shape:
        return _as_input(shape)
    if shape.get("type") == "array" and isinstance(shape.get("items"), dict):
        return {**shape, "items": _within(shape["items"])}
    return shape


def _optional(shape: dict[str, Any]) -> bool:
    nullable = any(choice.get("type") == "null" for choice in shape.get("anyOf", []))
    return "default" in shape or nullable or shape.get("type") == "null"


def packet() -> dict[str, Any]:
    """What a handoff asks for: the task, its deliverable and its acceptance criteria."""
    return _as_input(_object("packet"))


def checkpoint() -> dict[str, Any]:
    return _as_input(_object("latest_checkpoint"))


def result() -> dict[str, Any]:
    return _as_input(_object("result"), RESULT_INPUT_FIELDS)


def verdict() -> dict[str, Any]:
    """A verdict on one acceptance criterion: {criterion, accepted, note}."""
    items: dict[str, Any] = _object("result")["properties"]["verdicts"]["items"]
    return _as_input(items)


def capability() -> dict[str, Any]:
    """A capability an agent offers: {kind, name}."""
    route = _object("route")
    found = route["properties"]["capability"]
    objects = [s for s in found.get("anyOf", [found]) if s.get("type") == "object"]
    return _as_input(objects[0])
