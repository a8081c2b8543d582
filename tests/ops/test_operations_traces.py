"""Traces of a running `prickle serve` with OTEL_TRACES_EXPORTER=console: a move has its
`prickle.move` span with the task id, the verb, and the states it went from and to, beside
the ASGI, GraphQL and SQL spans; with no OTEL_* variables, nothing of OpenTelemetry loads."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from live import Cast
from server import ROOT

pytest.importorskip(
    "opentelemetry.sdk",
    reason="tracing needs the otel extra (pip install -e '.[otel]'; the test extra has it)",
)

CAST = ("alice", "alice/coder", "alice/writer")
OTEL = {"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "prickle-test"}


def spans_in(text: str) -> list[dict[str, Any]]:
    """The console exporter's spans: JSON objects, each starting on a line of its own."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    while (start := text.find("\n{", position)) != -1:
        try:
            value, position = decoder.raw_decode(text, start + 1)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(value, dict) and "context" in value:
            found.append(value)
    return found


def test_a_move_has_its_span(start_server: Any) -> None:
    server = start_server(env=OTEL)
    cast = Cast(server).add(*CAST)
    task = cast.handoff("alice/coder", "alice/writer", "traced")
    cast.move("alice/writer", "accept_task", task["id"])
    server.stop()
    spans = spans_in("\n" + (server.logs / "stdout").read_text())
    moves = [s for s in spans if s["name"] == "prickle.move"]
    assert len(moves) == 1, [s["name"] for s in spans]
    attributes = moves[0]["attributes"]
    assert attributes == {
        "prickle.task_id": task["id"],
        "prickle.verb": "accept_task",
        "prickle.from_state": task["state"],
        "prickle.to_state": "accepted",
    }
    assert moves[0]["resource"]["attributes"]["service.name"] == "prickle-test"
    names = {s["name"] for s in spans}
    assert any(n.startswith("POST") for n in names), names  # the ASGI app's
    assert any("GraphQL" in n or "graphql" in n.lower() for n in names), names  # Strawberry's
    assert any(k.startswith("db.") for s in spans for k in s["attributes"]), names  # SQL
    trace_of_move = moves[0]["context"]["trace_id"]
    assert any(  # the move is inside the request's trace
        s["context"]["trace_id"] == trace_of_move and s["name"].startswith("POST") for s in spans
    )
    assert all(cast.token(n) not in json.dumps(spans) for n in CAST)


@pytest.mark.once
def test_off_when_unset_imports_nothing() -> None:
    code = (
        "import sys; from app.main import create_app; create_app();"
        "import app.service.unit;"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
