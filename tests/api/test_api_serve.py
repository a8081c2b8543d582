"""`prickle serve` and `prickle schema` as a user runs them."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from server import ROOT, prickle

from app.api.schema import sdl
from app.api.verbs import operation_document
from app.cli import main
from app.service.verbs import registry


@pytest.mark.once
def test_the_committed_schema_graphql_is_the_live_schema() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == sdl(), (
        "schema.graphql is stale: run `prickle schema --output schema.graphql`"
    )


@pytest.mark.once
def test_the_committed_verb_documents_are_what_the_declarations_generate(tmp_path: Path) -> None:
    assert main(["schema", "--output", str(tmp_path / "s"), "--documents", str(tmp_path)]) == 0
    for verb in registry():
        written = (tmp_path / f"{verb.name}.graphql").read_text()
        committed = ROOT / "graphql" / "mutations" / f"{verb.name}.graphql"
        assert written == operation_document(verb) == committed.read_text(), (
            f"{committed} is stale: run "
            "`prickle schema --output schema.graphql --documents graphql/mutations`"
        )


@pytest.mark.once
def test_prickle_schema_writes_the_sdl(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["schema", "--output", str(tmp_path / "schema.graphql")]) == 0
    assert (tmp_path / "schema.graphql").read_text() == sdl()
    assert main(["schema"]) == 0
    assert capsys.readouterr().out.endswith(sdl())


@pytest.mark.once
def test_the_sdl_keeps_the_protocols_snake_case_and_lowercase_enum_values() -> None:
    text = sdl()
    assert "enum TaskState {\n  requested\n  routed\n" in text
    assert "enum DecidedByPolicy {\n  v0\n  auto_accept\n}" in text
    assert "union ActorRef = PersonRef | AgentRef | SystemRef" in text
    for name in (
        "as_protocol: JSON!",
        "allowed_verbs: [String!]!",
        "page_info: PageInfo! @deprecated",
        "from: TaskState!",
    ):
        assert name in text
    assert "asProtocol" not in text
    # Relay's names are the one exception to the protocol's snake_case (docs/frontends.md)
    fields = set(re.findall(r"^  ([A-Za-z_][A-Za-z0-9_]*)[(:]", text, re.MULTILINE))
    camel = {f for f in fields if any(c.isupper() for c in f)}
    assert camel == {"pageInfo", "hasNextPage", "hasPreviousPage", "startCursor", "endCursor"}


async def test_the_first_start_prints_an_owner_token_and_a_second_prints_none(start_server) -> None:  # type: ignore[no-untyped-def]
    first = start_server("--owner", "ops")
    assert "owner token for ops:\n" in first.output()
    assert first.data("{ me { kind id } }") == {"me": {"kind": "person", "id": "ops"}}
    token = first.owner_token
    first.stop()
    second = start_server()
    assert second.owner_token is None
    assert "owner token" not in second.output()
    assert second.data("{ me { id } }", token=token) == {"me": {"id": "ops"}}


async def test_the_server_answers_health_get_queries_and_graphiql(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server()
    health = server.client.get(f"{server.base_url}/healthz").json()
    assert health == {"status": "ok", "database": "up"}
    got = server.client.get(
        server.graphql_url, params={"query": "{ me { id } }"}, headers=server.headers()
    )
    assert got.json() == {"data": {"me": {"id": "admin"}}}
    page = server.client.get(server.graphql_url, headers={"Accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()
    refused = server.client.get(
        server.graphql_url,
        params={"query": 'mutation { delete_gate_rule(id: "x") }'},
        headers=server.headers(),
    )
    assert refused.status_code == 405 and "mutations are not allowed" in refused.text


@pytest.mark.once
def test_more_than_one_worker_on_sqlite_is_refused_with_exit_code_2(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/prickle.db"
    done = prickle("serve", "--workers", "2", "--database-url", url, timeout=60)
    assert done.returncode == 2
    assert "--workers above 1 needs PostgreSQL" in done.stderr
    assert not (tmp_path / "prickle.db").exists()


@pytest.mark.once
def test_a_malformed_owner_handle_is_refused_with_exit_code_2(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/prickle.db"
    done = prickle("serve", "--owner", "Not Valid", "--database-url", url, timeout=60)
    assert done.returncode == 2
    assert "invalid_input" in done.stderr


async def test_several_workers_serve_one_postgresql_database(
    start_server, pg_database_url: str
) -> None:  # type: ignore[no-untyped-def]
    server = start_server("--workers", "2", url=pg_database_url)
    assert server.owner_token is not None
    for _ in range(6):
        assert server.data("{ me { id } }") == {"me": {"id": "admin"}}
    deadline = time.monotonic() + 60
    while server.output().count("Application startup complete") < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert server.output().count("Application startup complete") == 2


async def test_a_line_per_request_is_logged_only_with_access_log(start_server) -> None:  # type: ignore[no-untyped-def]
    quiet = start_server()
    loud = start_server("--access-log")
    for server in (quiet, loud):
        assert server.data("{ __typename }") == {"__typename": "Query"}
    line = '"method":"POST","path":"/graphql","status":200'
    deadline = time.monotonic() + 10
    while line not in loud.output() and time.monotonic() < deadline:
        time.sleep(0.02)  # the log line is written after the response
    assert line in loud.output()
    assert '"path":"/graphql"' not in quiet.output()
    assert "Uvicorn running on" in quiet.output()  # the server's own lines still come
