"""Input shapes checked against the protocol's own task schema, so limits never drift."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any, TypeVar

import jsonschema_rs
from jsonschema import Draft202012Validator, FormatChecker

from app.domain.errors import InvalidInput
from app.domain.table import task_schema
from app.domain.types import JSON

T = TypeVar("T")


def _result_schema() -> JSON:
    schema: JSON = task_schema()["properties"]["result"]["anyOf"][0]
    return schema


@cache
def _subschemas() -> dict[str, JSON]:
    props = task_schema()["properties"]
    result = _result_schema()["properties"]
    return {
        "packet": props["packet"],
        "checkpoint": props["latest_checkpoint"]["anyOf"][0],
        "evidence": result["evidence"],
        "artifacts": result["artifacts"],
        "verdicts": result["verdicts"],
        "context": result["lineage"]["anyOf"][0]["properties"]["context"],
        "summary": result["summary"],
        "provenance": result["provenance"],
        "submission_id": result["submission_id"],
        "reason": result["reason"],
        "capability": props["route"]["properties"]["capability"],
        "capability_kind": props["route"]["properties"]["capability"]["properties"]["kind"],
        "origin_message_id": props["origin_message_id"],
        "parent_task_id": props["parent_task_id"],
        "display_title": {"type": ["string", "null"], "minLength": 1, "maxLength": 200},
        "turn_budget": props["turn_budget"],
        "task_id": props["id"],
        "deliverable_type": props["packet"]["properties"]["deliverable_type"],
        "text": {"type": "string", "maxLength": 4000},
        "result": _result_schema(),
        "task": task_schema(),
    }


def choices(name: str) -> tuple[str, ...]:
    """The values the schema's named enum allows, in its order."""
    return tuple(_subschemas()[name]["enum"])


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(_subschemas()[name], format_checker=FormatChecker())


@cache
def quick(name: str) -> Callable[[Any], bool]:
    """Whether a value fits the named schema, by jsonschema-rs (compiled Rust, some 20 times
    quicker), its formats checked by the very functions `validator` uses. A value it finds
    wanting is judged again by `validator`, whose verdict and message stand."""
    formats = FormatChecker()
    return jsonschema_rs.Draft202012Validator(
        _subschemas()[name],
        validate_formats=True,
        formats={
            name: (lambda value, name=name: formats.conforms(value, name))
            for name in formats.checkers
        },
    ).is_valid


def _quickly_fits(name: str, value: Any) -> bool:
    """`quick`, False for a value jsonschema-rs cannot take (say a key that is no string):
    jsonschema then judges it."""
    try:
        return quick(name)(value)
    except Exception:
        return False


SHORT = 200  # strings up to this long are remembered as fitting (see _fits)


def check(name: str, value: T, label: str | None = None) -> T:
    """Return `value` if it fits the named part of the schema, else raise InvalidInput."""
    if (value is None or type(value) is int or type(value) is str) and _fits(name, value):
        return value
    if _quickly_fits(name, value):
        _refuse_nul(value, label or name)
        return value
    error = next(iter(validator(name).iter_errors(value)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        path = f"{label or name}{'.' + where if where else ''}"
        raise InvalidInput(f"{path}: {_short(error.message)}")
    _refuse_nul(value, label or name)
    return value


@lru_cache(maxsize=4096)
def _fits(name: str, value: str | int | None) -> bool:
    """Whether a short scalar fits the named schema, with no U+0000: the same few values
    (a task's id, an absent option) are checked again and again."""
    if isinstance(value, str) and (len(value) > SHORT or "\x00" in value):
        return False
    return quick(name)(value)


def _refuse_nul(value: Any, path: str) -> None:
    """PostgreSQL holds no U+0000 in text or jsonb: refused here, so on every backend alike."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{path}: must not contain U+0000")
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_nul(key, path)
            _refuse_nul(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_nul(item, f"{path}.{index}")


def _short(message: str) -> str:
    return message if len(message) <= 300 else message[:297] + "..."


def with_defaults(name: str, value: JSON) -> JSON:
    """Fill the schema's declared defaults for missing properties (one level deep)."""
    props = _subschemas()[name].get("properties", {})
    filled = dict(value)
    for key, spec in props.items():
        if key not in filled and "default" in spec:
            filled[key] = spec["default"]
    return filled


def with_item_defaults(name: str, item: Any) -> Any:
    """Fill the declared defaults of one item of the named array."""
    if not isinstance(item, dict):
        return item
    props = _subschemas()[name]["items"].get("properties", {})
    present = {k: v for k, v in item.items() if v is not None}
    return {**{k: s["default"] for k, s in props.items() if "default" in s}, **present}
