"""The server's own trusted documents (app/api/documents.json) are fresh, and the Python
client and the board's documents run under `--trusted-documents-only` on a real server; a
manifest that cannot be used stops `serve`; the APQ registrations are bounded. (The persisted
documents' HTTP answers: tests/api/test_api_frontends.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import graphql
import pytest
from graphql.validation import NoDeprecatedCustomRule
from server import ROOT, Server, module_database, prickle, start
from test_api_frontends import code_of, run, sha256

from app.api import persisted

# Files, pure logic, and documents resolved before anything reaches the database: the same on
# either backend and path.
pytestmark = pytest.mark.once


def test_the_servers_manifest_is_fresh() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/documents.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = persisted.load(persisted.MANIFEST)
    names = " ".join(manifest.values())
    for operation in ("BoardPage", "BoardEvents", "GraphView", "Handoff", "OnTaskEvents"):
        assert operation in names, operation


def own_documents() -> dict[str, list[str]]:
    """Every document the project sends, by where it comes from: scripts/documents.py's."""
    spec = importlib.util.spec_from_file_location("documents", ROOT / "scripts" / "documents.py")
    assert spec is not None and spec.loader is not None
    documents = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(documents)
    return {
        "graphql/": documents.graphql_documents(),
        "the Python client": documents.client_documents(),
        "the board": documents.board_documents(),
    }


def test_the_projects_own_documents_select_no_deprecated_field() -> None:
    # the project's frontends read the API as a third-party one does: what is deprecated is
    # kept for others, one release
    schema = graphql.build_schema((ROOT / "schema.graphql").read_text())
    rules = [*graphql.specified_rules, NoDeprecatedCustomRule]
    found = own_documents()
    for origin, documents in found.items():
        assert documents, origin
        for document in documents:
            errors = graphql.validate(schema, graphql.parse(document), rules)
            assert not errors, f"{origin}: {[e.message for e in errors]}\n{document}"


def test_a_deprecated_field_is_found_in_a_document() -> None:
    schema = graphql.build_schema((ROOT / "schema.graphql").read_text())
    document = graphql.parse("{ tasks(first: 1) { page_info { end_cursor } } }")
    errors = graphql.validate(schema, document, [NoDeprecatedCustomRule])
    assert [e.message for e in errors] == [
        "The field TaskConnection.page_info is deprecated. Use pageInfo (Relay's name).",
        "The field PageInfo.end_cursor is deprecated. Use pageInfo { endCursor } (Relay's name).",
    ]


def test_a_manifest_that_cannot_be_used_is_refused(tmp_path: Path) -> None:
    for content, said in (
        ("[1, 2]", "not a JSON object"),
        ("{", "--trusted-documents"),
        (json.dumps({"md5:abc": "{ me { id } }"}), "is not a sha256 hash"),
        (json.dumps({"sha256:" + "0" * 64: "{ me { id } }"}), "has another sha256"),
    ):
        manifest = tmp_path / "manifest.json"
        manifest.write_text(content)
        with pytest.raises(persisted.ManifestError, match=said):
            persisted.load(manifest)
    url = f"sqlite+aiosqlite:///{tmp_path}/p.db"
    for command in (("serve", "--database-url", url), ("config",)):  # as both say it
        done = prickle(*command, "--trusted-documents", str(manifest))
        assert done.returncode == 2, done.stdout
        assert "has another sha256" in done.stderr, done.stderr
    assert not (tmp_path / "p.db").exists()  # refused before the database


def test_the_registered_documents_are_bounded() -> None:
    documents = persisted.Documents()
    for n in range(persisted.REGISTERED + 5):
        document = f"query Q{n} {{ me {{ id }} }}"
        apq = {"persistedQuery": {"version": 1, "sha256Hash": persisted.sha256(document)}}
        assert documents.resolve(document, apq, None) == document
    assert len(documents.registered) == persisted.REGISTERED
    oldest = {
        "persistedQuery": {"version": 1, "sha256Hash": persisted.sha256("query Q0 { me { id } }")}
    }
    with pytest.raises(persisted.NotFound):
        documents.resolve(None, oldest, None)


def test_the_registered_documents_are_bounded_in_size_too() -> None:
    documents = persisted.Documents()
    big = "query Big { me { id } }" + " " * 1_000_000
    for n in range(6):
        document = big + "#" * n
        apq = {"persistedQuery": {"version": 1, "sha256Hash": persisted.sha256(document)}}
        documents.resolve(document, apq, None)
    assert documents.characters <= persisted.REGISTERED_CHARACTERS
    assert len(documents.registered) == persisted.REGISTERED_CHARACTERS // len(big)


# --trusted-documents-only: the board and the Python client, which send their documents' text


@pytest.fixture(scope="module")
def trusted_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("trusted")
    with module_database(directory) as url:
        served = start(url, directory / "logs", "--trusted-documents-only")
        try:
            yield served
        finally:
            served.stop()


def board_document(name: str, kind: str = "query") -> str:
    """The board's document of that operation name, as app/api/documents.json holds it."""
    manifest = json.loads((ROOT / "app" / "api" / "documents.json").read_text())
    return next(d for d in manifest.values() if re.match(rf"{kind} {name}[( ]", d))


def test_only_trusted_documents_run(trusted_only: Server) -> None:
    mutation = 'mutation { register_agent(name: "untrusted") { token } }'
    for body in (
        {"query": mutation},
        {"query": "{ me { id } }"},
        {
            "query": mutation,
            "extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256(mutation)}},
        },
        {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256(mutation)}}},
        {"documentId": f"sha256:{sha256(mutation)}"},
    ):
        answer = run(trusted_only, body)
        assert answer.status_code == 400, (body, answer.text)
        assert code_of(answer) in ("trusted_documents_only", "persisted_document_not_found")
    # the board's page query, sent as the board sends it (its text), runs
    page = board_document("BoardPage")
    answer = run(trusted_only, {"query": page, "variables": {"project": None, "after": None}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["tasks"]["edges"] == []
    by_id = run(trusted_only, {"documentId": f"sha256:{sha256(page)}"})
    assert by_id.json()["data"]["tasks"]["total_count"] == 0
    # a board move, as its act form sends it (only the fields filled in): the verb's document
    # as the board reads it, from task_verbs; the server trusts every verb's
    verbs = run(trusted_only, {"query": board_document("BoardVerbs")}).json()["data"]
    move = next(v["document"] for v in verbs["task_verbs"] if v["name"] == "cancel_task")
    answer = run(trusted_only, {"query": move, "variables": {"task_id": "no-such-task"}})
    assert code_of(answer) == "not_found", answer.text  # run, and refused by the service


async def test_the_python_client_works_in_trusted_only_mode(trusted_only: Server) -> None:
    """A handoff, accepted, heard by the client's event stream, all through prickle_client."""
    sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
    try:
        from prickle_client import AsyncClient
    finally:
        sys.path.remove(str(ROOT / "clients" / "python" / "src"))

    url, token = trusted_only.graphql_url, trusted_only.owner_token or ""
    async with AsyncClient(url, token) as owner:
        planner = await owner.register_agent("planner")
        coder = await owner.register_agent("coder")
        async with (
            AsyncClient(url, planner.token) as asking,
            AsyncClient(url, coder.token) as working,
        ):
            packet = {
                "task": "Trusted documents only",
                "deliverable_type": "code",
                "acceptance_criteria": ["the client's documents are all in the manifest"],
            }
            task = await asking.handoff("trusted", coder.agent_id, packet)
            received: list[Any] = []
            arrived = asyncio.Event()

            async def follow() -> None:
                async for event in working.events(task_id=task.id):
                    received.append(event)
                    arrived.set()

            follower = asyncio.create_task(follow())
            try:
                async with asyncio.timeout(20):
                    await arrived.wait()  # the snapshot: subscribed
                    arrived.clear()
                    accepted = await working.accept_task(task.id)
                    assert accepted.state == "accepted"
                    await arrived.wait()
            finally:
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follower
            first, seen = received[:2]
            assert (first.kind, seen.verb) == ("snapshot", "accept_task")


async def test_a_free_text_subscription_is_refused_in_trusted_only_mode(
    trusted_only: Server,
) -> None:
    from live import opened

    async with opened(trusted_only, trusted_only.owner_token) as ws:
        await ws.subscribe(id="free", query="subscription { task_events { cursor } }")
        refused = await ws.errors("free")
        assert refused[0]["extensions"]["code"] == "trusted_documents_only"
        board = next(
            d
            for d in json.loads((ROOT / "app" / "api" / "documents.json").read_text()).values()
            if d.startswith("subscription BoardHead(")
        )
        await ws.subscribe({"task_id": "nope"}, id="board", query=board)
        assert await ws.quiet(0.3) == []  # subscribed: no refusal, no event for no task
