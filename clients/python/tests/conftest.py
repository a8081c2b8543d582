from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness import Server, running
from prickle_client import Client

HELPER_OFFERS = {"kind": "repo", "name": "prickle"}


@dataclass
class Cast:
    """alice owns alice/planner (the requester), bob owns bob/coder (the assignee); bob's
    gate allows alice's agents. carol owns carol/spy, who may see nothing of theirs."""

    server: Server
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, who: str) -> Client:
        return Client(self.url, self.tokens[who])


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("server"), "--rate-limit", "0") as started:
        yield started


@pytest.fixture(scope="session")
def cast(server: Server) -> Cast:
    people = ("alice", "bob", "carol")
    with ThreadPoolExecutor() as pool:
        tokens = dict(zip(people, pool.map(server.token, people), strict=True))
    for owner, name in (("alice", "planner"), ("bob", "coder"), ("carol", "spy")):
        tokens[f"{owner}/{name}"] = server.register(tokens[owner], name)
    tokens["bob/helper"] = server.register(tokens["bob"], "helper", [HELPER_OFFERS])
    server.allow(tokens["bob"], "alice")
    server.review_results(tokens["alice"], "review")
    return Cast(server, tokens)


def packet(**overrides: Any) -> dict[str, Any]:
    return {
        "task": "Add a health check endpoint",
        "deliverable_type": "code",
        "acceptance_criteria": ["GET /health answers 200", "it is documented"],
        **overrides,
    }


def result(**overrides: Any) -> dict[str, Any]:
    return {
        "summary": "GET /health answers 200 and the README documents it",
        "provenance": "agent_generated",
        "evidence": [
            {"kind": "test_output", "summary": "test_health passes", "criteria": [0]},
            {"kind": "note", "summary": "README section", "criteria": [1]},
        ],
        **overrides,
    }


ROOT = Path(__file__).resolve().parents[3]
