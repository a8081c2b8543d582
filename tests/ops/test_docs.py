"""The words of README.md and docs/, held to what they say.

docs/task-states.md and the README's state diagram are generated from the transition table
and committed in step with it. The README's first task runs as it is written, against a
real `prickle serve` on a new database; so does every shell and Python block of docs/ not
marked `<!-- fragment -->` (docs/testing.md, "Tested words")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.docs import state_diagram, task_states_markdown, with_state_diagram

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
COMMITTED = DOCS / "task-states.md"
FIRST_TASK = (
    "<!-- first task: tests/ops/test_docs.py runs this block, as it is, against a new server -->"
)
FRAGMENT = "<!-- fragment"  # `<!-- fragment -->`, or `<!-- fragment: why -->`
RUNS = {"sh": "bash", "bash": "bash", "shell": "bash", "python": "python"}
BLOCK_TIMEOUT = 120


def test_the_committed_task_states_page_is_what_the_table_generates() -> None:
    assert COMMITTED.read_text() == task_states_markdown(), (
        "docs/task-states.md is stale: run `prickle docs` and commit the result"
    )


def test_the_readme_state_diagram_is_what_the_table_generates() -> None:
    text = README.read_text()
    assert text == with_state_diagram(text), (
        "README.md's state diagram is stale: run `prickle docs` and commit the result"
    )


def test_the_state_diagram_draws_every_move_and_ends_in_the_final_states() -> None:
    diagram = state_diagram()
    assert diagram.startswith("```mermaid\nstateDiagram-v2\n")
    assert "    [*] --> requested\n" in diagram
    assert "    requested --> waiting: handoff, request_capability\n" in diagram
    assert "    approval --> completed: decide_result\n" in diagram
    assert diagram.count(" --> [*]\n") == 3
    assert diagram.count("-->") == 35 + 1 + 3


def test_the_task_states_page_counts_states_moves_and_ends() -> None:
    assert "11 states, 35 allowed moves, 3 end a task" in task_states_markdown()


def test_the_task_states_page_has_a_section_per_state_and_marks_the_final_ones() -> None:
    text = task_states_markdown()
    for name in (
        "requested",
        "routed",
        "accepted",
        "working",
        "waiting",
        "verifying",
        "approval",
        "returned",
    ):
        assert f"## `{name}`\n" in text
    for name in ("completed", "rejected", "cancelled"):
        assert f"## `{name}` (final)\n" in text


# the site


def test_the_site_builds_strict_with_every_page_in_its_navigation(tmp_path: Path) -> None:
    """A broken link or anchor, or a page of docs/ left out of mkdocs.yml's nav, fails."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    home = (site / "index.html").read_text()
    assert "Your first task" in home and 'class="mermaid"' in home
    assert 'href="api/"' in home  # README's links into docs/, as the site's own
    reference = (site / "graphql-reference" / "index.html").read_text()
    for name in ("handoff", "return_result", "TaskState", "EvidenceInput"):
        assert f"<code>{name}</code>" in reference, name
    assert (site / "search" / "search_index.json").exists()


def test_the_graphql_reference_has_a_section_for_every_type_of_the_schema() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from graphql import build_schema
    from graphql_reference import markdown

    sdl = (ROOT / "schema.graphql").read_text()
    page = markdown(sdl)
    for name in build_schema(sdl).type_map:
        if not name.startswith("__") and name not in ("String", "Int", "Float", "Boolean", "ID"):
            assert f"\n## {name}\n" in page or f"\n### {name}\n" in page, name
    assert "| `handoff` | [`Task`](#task)`!` |" in page


# code blocks, run


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of its opening fence
    language: str
    text: str
    fragment: bool

    def __str__(self) -> str:
        return f"{self.page}, the {self.language} block at line {self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, each with whether the line before it (blank lines
    aside) marks it a fragment."""
    found, lines, at = [], path.read_text().splitlines(), 0
    while at < len(lines):
        opening = re.match(r"^(`{3,})\s*([\w+-]*)", lines[at])
        if opening is None:
            at += 1
            continue
        fence, start = opening.group(1), at
        end = next((i for i in range(at + 1, len(lines)) if lines[i].strip() == fence), len(lines))
        before = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        text = "\n".join(lines[start + 1 : end]) + "\n"
        name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        found.append(Block(name, start + 1, opening.group(2), text, FRAGMENT in before))
        at = end + 1
    return found


def runnable(block: Block) -> bool:
    return block.language in RUNS and not block.fragment


def first_task() -> Block:
    text = README.read_text()
    assert FIRST_TASK in text, f"README.md has no {FIRST_TASK} line before its first task"
    marker = text[: text.index(FIRST_TASK)].count("\n") + 1
    following = [b for b in blocks(README) if b.line == marker + 1]
    assert following, "README.md: the first-task marker is not right above a code block"
    return following[0]


def run(block: Block, server: Any, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    """The block run by bash or Python in the project's root, with `.venv/bin` first on the
    PATH, the Python client importable, and the server's URL and database in the
    environment; its output, or a failure naming the page and the block."""
    script = tmp_path / ("block.py" if RUNS[block.language] == "python" else "block.sh")
    script.write_text(block.text)
    command = (
        [sys.executable, str(script)] if script.suffix == ".py" else ["bash", "-e", str(script)]
    )
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT / "clients" / "python" / "src"),
        "PRICKLE_URL": server.graphql_url,
        "PRICKLE_DATABASE_URL": server.database_url,
        **(env or {}),
    }
    done = subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=BLOCK_TIMEOUT
    )
    assert done.returncode == 0, (
        f"{block} failed (exit {done.returncode}); mark it `<!-- fragment -->` if it is not "
        f"meant to run as it stands.\n--- block\n{block.text}--- stdout\n{done.stdout}"
        f"--- stderr\n{done.stderr}"
    )
    return done.stdout


def test_the_readme_first_task_runs_as_written_on_a_new_database(
    api_server: Any, tmp_path: Path
) -> None:
    """The module's server, first used here: its database is new (the docs' blocks below use
    it after, as the owner `admin`)."""
    block = first_task()
    assert block.language in RUNS and not block.fragment
    server = api_server
    out = run(block, server, tmp_path)
    task_id, state = out.splitlines()[0].split()
    assert state == "completed", out
    assert '"complete": true' in out, out
    alice = server.token(owner="alice")
    task = server.data(
        "query($id: ID!) { task(id: $id) { state requester assignee result { evidence_report"
        " { complete coverage { criterion evidence } } } } }",
        {"id": task_id},
        alice,
    )["task"]
    assert task["state"] == "completed"
    assert (task["requester"], task["assignee"]) == ("alice/planner", "alice/coder")
    assert task["result"]["evidence_report"]["coverage"] == [{"criterion": 0, "evidence": [0]}]


def test_a_block_is_found_with_its_page_line_and_fragment_mark(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```sh\necho runs\n```\n\n<!-- fragment -->\n\n```python\nwait()\n```\n"
        "````text\n```sh\nnot a block\n```\n````\n"
    )
    found = blocks(page)
    assert [(b.line, b.language, b.fragment) for b in found] == [
        (3, "sh", False),
        (9, "python", True),
        (12, "text", False),
    ]
    assert found[0].text == "echo runs\n"
    assert [runnable(b) for b in found] == [True, False, False]


DOC_BLOCKS = [b for page in sorted(DOCS.glob("*.md")) for b in blocks(page) if runnable(b)]


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=[f"{b.page}:{b.line}" for b in DOC_BLOCKS])
def test_a_docs_block_that_claims_to_run_runs(
    api_server: Any, block: Block, tmp_path: Path
) -> None:
    """Against a server of this module's: `http://127.0.0.1:8000` in a block is that server's
    address; `$TOKEN` and `$PRICKLE_OWNER_TOKEN` are its owner's token, `$PRICKLE_TOKEN` an
    agent's of that owner."""
    address = api_server.base_url.removeprefix("http://")
    local = Block(
        block.page, block.line, block.language, block.text.replace("127.0.0.1:8000", address), False
    )
    agent = api_server.token(agent="admin/docs")
    owner = api_server.owner_token
    run(
        local,
        api_server,
        tmp_path,
        {"TOKEN": owner, "PRICKLE_OWNER_TOKEN": owner, "PRICKLE_TOKEN": agent},
    )
