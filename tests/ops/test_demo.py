"""`prickle demo`: an empty database filled with a small project in every state a task rests
in, as the API shows it; a database that holds tasks, or none that answers, refused in one
line with nothing changed."""

from __future__ import annotations

from typing import Any

import pytest
from server import pg_url, postgres_only, prickle
from sqlalchemy.engine import make_url

from app.domain.table import table

# requested and verifying are passed within a call: the gate and the result policy decide
RESTING = set(table().states) - {"requested", "verifying"}
TASKS = """{ tasks(project: "demo", first: 100) {
  total_count
  edges { node { id state waiting_on parent_task_id packet { depends_on } } } } }"""


def filled(url: str) -> tuple[Any, str]:
    made = prickle("demo", "--database-url", url)
    assert made.returncode == 0, made.stderr
    return made, made.stdout.splitlines()[-1]


def test_demo_fills_an_empty_database_with_every_resting_state_then_refuses_it(
    database_url: str, start_server: Any
) -> None:
    made, token = filled(database_url)
    assert "http://127.0.0.1:8000/board?project=demo" in made.stdout
    server = start_server()
    data = server.data(TASKS, None, token)
    tasks = [e["node"] for e in data["tasks"]["edges"]]
    assert {t["state"] for t in tasks} == RESTING
    assert {t["waiting_on"] for t in tasks if t["state"] == "waiting"} == {
        "owner_approval",
        "human",
        "agent",
    }
    held = [t for t in tasks if t["waiting_on"] == "owner_approval"]
    assert len(held) == 2
    children = [t for t in tasks if t["parent_task_id"]]
    assert len(children) == 3 and sum(bool(t["packet"]["depends_on"]) for t in children) == 2
    inbox = server.data("{ inbox(first: 50) { total_count } }", None, token)["inbox"]
    assert inbox["total_count"] == 4  # two held handoffs, a question, a result to decide
    assert server.data("{ me { id } }", None, token)["me"]["id"] == "ada"

    # once more: refused in one line, and nothing changed
    before = server.data(TASKS, None, token)
    events = server.data(
        '{ task_events(project: "demo", first: 500) { total_count } }', None, token
    )
    again = prickle("demo", "--database-url", database_url)
    assert again.returncode == 2
    assert again.stdout == ""
    assert again.stderr == (
        "prickle: conflict: the database already holds tasks; the demo fills an empty one only\n"
    )
    assert server.data(TASKS, None, token) == before
    after = server.data('{ task_events(project: "demo", first: 500) { total_count } }', None, token)
    assert after == events


@pytest.mark.once
@pytest.mark.parametrize(
    ("url", "said"),
    [
        (  # nothing listens on port 1
            "postgresql+asyncpg://postgres@127.0.0.1:1/nothing",
            "unavailable: the database is unavailable (unreachable); nothing changed",
        ),
        (
            "sqlite+aiosqlite:////no/such/folder/prickle.db",
            "sqlite+aiosqlite:////no/such/folder/prickle.db: the folder /no/such/folder does not"
            " exist",
        ),
    ],
    ids=["no-server", "no-folder"],
)
def test_demo_on_a_database_it_cannot_use_says_so_in_one_line(url: str, said: str) -> None:
    done = prickle("demo", "--database-url", url)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"prickle: {said}\n")


@postgres_only
def test_demo_on_a_postgresql_database_that_does_not_exist_says_so_in_one_line() -> None:
    url = pg_url("prickle_no_such_database")
    shown = make_url(url).render_as_string(hide_password=True)
    done = prickle("demo", "--database-url", url)
    said = f'prickle: {shown}: database "prickle_no_such_database" does not exist\n'
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said)
