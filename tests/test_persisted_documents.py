"""The server's own trusted documents (app/api/documents.json) are fresh, a manifest that
cannot be used stops `serve`, and the APQ registrations are bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from server import ROOT, prickle

from app.api import persisted

pytestmark = pytest.mark.once  # files and pure logic: the same on either backend


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


def test_a_manifest_that_cannot_be_used_stops_serve(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/p.db"
    for content, said in (
        ("[1, 2]", "not a JSON object"),
        ("{", "--trusted-documents"),
        (json.dumps({"md5:abc": "{ me { id } }"}), "is not a sha256 hash"),
        (json.dumps({"sha256:" + "0" * 64: "{ me { id } }"}), "has another sha256"),
    ):
        manifest = tmp_path / "manifest.json"
        manifest.write_text(content)
        for command in (("serve", "--database-url", url), ("config",)):
            done = prickle(*command, "--trusted-documents", str(manifest))
            assert done.returncode == 2, done.stdout
            assert said in done.stderr, done.stderr
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
