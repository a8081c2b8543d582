"""When Strawberry's internals are not what the fast paths were written for, the server says
so once and runs plain Strawberry, with the same answers (app/compat/strawberry.py)."""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from compat_break import lacking
from live import Cast
from server import Server
from strawberry.types import get_object_definition

from app import settings
from app.api import fast as fast_paths
from app.api.fast import inputs as fast_inputs
from app.api.fast.compiled import CompilingExecutor
from app.api.inputs import HandoffInput
from app.api.schema import build_schema
from app.compat import strawberry as compat

# Strawberry's internals and the answers above storage: the backend does not change them
pytestmark = pytest.mark.once

VERSION = version("strawberry-graphql")
MISSING = ("strawberry.types.info", "Info._gone")  # a name no Strawberry has
WARNING = "the API's fast paths are off"
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "the tests pass", "criteria": [0, 1]}],
}
MOVE = "mutation($id: ID!) { %s(task_id: $id) { id state waiting_on version __typename } }"
PAGE = (
    "query($project: String!) { tasks(project: $project) { total_count"
    " edges { cursor node { id state assignee parent { id } children { id state } } } } }"
)


@pytest.fixture
def checked_again(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The check runs again in this test, and once more after it (and the input hooks are
    put back), so that the other tests see the server as it was."""
    monkeypatch.setenv("PRICKLE_FAST_PATHS", "on")
    settings.forget()  # read again, with the variable
    compat.usable.cache_clear()
    yield
    monkeypatch.undo()
    settings.forget()
    compat.usable.cache_clear()
    fast_inputs.wire(fast_paths.enabled())


def test_the_check_passes_on_the_strawberry_the_server_runs(checked_again: None) -> None:
    assert compat.missing() == []
    assert compat.usable()


def test_a_missing_name_is_one_warning_and_the_plain_path(
    checked_again: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(compat, "REQUIRED", (*compat.REQUIRED, MISSING))
    with caplog.at_level(logging.WARNING, logger=compat.log.name):
        assert not compat.usable()
        assert not compat.usable()
        assert not fast_paths.enabled()
    warned = [r for r in caplog.records if r.name == compat.log.name]
    assert len(warned) == 1
    message = warned[0].getMessage()
    assert f"strawberry-graphql {VERSION}" in message
    assert "strawberry.types.info:Info._gone" in message


def test_a_schema_built_when_the_check_fails_has_no_fast_path(
    checked_again: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compat, "REQUIRED", (*compat.REQUIRED, MISSING))
    schema = build_schema(fast_paths.enabled())
    assert not schema.fast
    assert not issubclass(schema.execution_context_class, CompilingExecutor)
    assert get_object_definition(HandoffInput, strict=True).from_input is None


def test_a_check_that_passes_wires_the_fast_paths_in(checked_again: None) -> None:
    assert compat.usable()
    assert build_schema(fast_paths.enabled()).fast


def _normal(text: str, cast: Cast) -> str:
    return MOMENT.sub("<at>", ULID.sub("<id>", text.replace(cast.suffix, "<cast>")))


def _life(server: Server) -> list[str]:
    """A task's life on `server` (its moves, a refusal, a page), each answer's
    text with the cast's handles, ids and moments written the same."""
    cast = Cast(server).add("alice", "alice/coder")
    other = cast.handoff("alice", "alice/coder", "life")["id"]
    task = cast.handoff("alice", "alice/coder", "life", task="the part")["id"]
    cast.move("alice/coder", "accept_task", other)
    token = cast.token("alice/coder")
    post: Callable[..., Any] = server.client.post
    texts = []
    for verb in ("accept_task", "start_task", "accept_task"):  # the last is refused
        body = {"query": MOVE % verb, "variables": {"id": task}}
        texts.append(post(server.graphql_url, json=body, headers=server.headers(token)).text)
    cast.move("alice/coder", "return_result", task, result=RESULT)
    body = {"query": PAGE, "variables": {"project": cast.project("life")}}
    texts.append(post(server.graphql_url, json=body, headers=server.headers(token)).text)
    assert '"invalid_state"' in texts[2]
    return [_normal(text, cast) for text in texts]


def test_a_server_whose_check_fails_warns_once_and_answers_as_with_the_fast_paths(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    plain = start_server(env=lacking(tmp_path, "strawberry", MISSING))
    plain_answers = _life(plain)
    plain.stop()
    warned = [line for line in plain.output().splitlines() if WARNING in line]
    assert len(warned) == 1, plain.output()
    assert f"strawberry-graphql {VERSION}" in warned[0]
    fast = start_server(env={"PRICKLE_FAST_PATHS": "on"})
    assert _life(fast) == plain_answers
    assert WARNING not in fast.output()


ROOT = Path(__file__).resolve().parents[2]
PRIVATE_MODULES = (
    "strawberry.schema.schema",
    "strawberry.types.arguments",
    "strawberry.types.base",
    "strawberry.types.enum",
    "graphql.execution.values",
)
PRIVATE_ATTRIBUTES = frozenset({"_raw_info", "send_next", "from_input"})


def _private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module in PRIVATE_MODULES:
            found.append(f"{path.relative_to(ROOT)}: from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{path.relative_to(ROOT)}: .{node.attr}")
    return found


def test_only_the_compat_module_touches_strawberrys_internals() -> None:
    files = [p for p in (ROOT / "app").rglob("*.py") if "compat" not in p.parts]
    assert len(files) > 100
    assert [use for path in files for use in _private_uses(path)] == []
