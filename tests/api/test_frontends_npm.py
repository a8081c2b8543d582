"""docs/frontends.md's snippets, run as written in node against a real `prickle serve`: each
block after a `<!-- test: NAME -->` line is written to NAME (a script, or the manifest the
server is started with) and the scripts run; Apollo Client's persisted-queries link sends its
document once, then its hash alone, as the server's access log shows.

The test installs `@apollo/client` (with `graphql` and `rxjs`) into `.cache/npm-apollo/` on
first use; where node or npm is missing it skips and says so, except under CI.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator

import npm
import pytest
from server import ROOT, Server, module_database, start

pytestmark = pytest.mark.once  # the HTTP layer: the same on either backend

DOCS = ROOT / "docs" / "frontends.md"
CACHE = npm.cache("apollo")
PACKAGES = ("@apollo/client@4", "graphql@16", "rxjs@7")
_SNIPPET = re.compile(r"<!-- test: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def snippets() -> dict[str, str]:
    return dict(_SNIPPET.findall(DOCS.read_text()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the docs' manifest, and its access log (what each request carried)."""
    directory = tmp_path_factory.mktemp("npm")
    manifest = directory / "persisted.json"
    manifest.write_text(snippets()["persisted.json"])
    with module_database(directory) as url:
        served = start(
            url, directory / "logs", "--access-log", "--trusted-documents", str(manifest)
        )
        try:
            yield served
        finally:
            served.stop()


def run(name: str, server: Server) -> list[str]:
    """The snippet NAME run in node beside the installed packages; its output lines."""
    npm.installed("apollo", PACKAGES, "@apollo/client")
    script = CACHE / name
    script.write_text(snippets()[name])
    done = subprocess.run(
        ["node", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            **os.environ,
            "PRICKLE_URL": server.graphql_url,
            "PRICKLE_TOKEN": server.owner_token or "",
        },
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def requests_of(server: Server, operation: str) -> list[dict]:
    lines = [json.loads(line) for line in server.output().splitlines() if line.startswith("{")]
    return [
        line
        for line in lines
        if line.get("path") == "/graphql" and line.get("operation") in (operation, None)
    ]


def test_every_snippet_is_run_here() -> None:
    assert set(snippets()) == {
        "graphql-over-http.mjs",
        "apollo-apq.mjs",
        "persisted.json",
        "document-id.mjs",
    }


def test_the_graphql_over_http_snippet(server: Server) -> None:
    status, body = run("graphql-over-http.mjs", server)
    assert status == "400 application/graphql-response+json; charset=utf-8"
    answer = json.loads(body)
    assert "data" not in answer and answer["errors"][0]["extensions"]["code"] == "invalid_input"


def test_apollo_sends_the_hash_alone_the_second_time(server: Server) -> None:
    before = len(requests_of(server, "Me"))
    lines = run("apollo-apq.mjs", server)
    me = {"__typename": "Principal", "id": "admin", "kind": "person"}
    assert [json.loads(line) for line in lines] == [me, me]
    sent = requests_of(server, "Me")[before:]
    # asked for its document, sent it with its hash, then the hash alone
    assert [(r["status"], r.get("code"), r.get("document")) for r in sent] == [
        (400, "PERSISTED_QUERY_NOT_FOUND", None),
        (200, "ok", "sent_with_id"),
        (200, "ok", "by_id"),
    ], sent


def test_the_document_id_snippet(server: Server) -> None:
    (line,) = run("document-id.mjs", server)
    assert json.loads(line) == {"data": {"me": {"id": "admin", "kind": "person"}}}
