"""The board's graph view (app/static/board/graph.js) in headless Chromium against a real
`prickle serve`: a 3-level tree with dependencies is drawn whole, a move recolours its node
without a reload, a click opens a node in the detail panel; and axe-core finds no serious or
critical violation on the board, the detail panel or the graph. Screenshots go to
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from axe import every_violation
from chromium import ARTIFACTS, needs_chromium, wait_until
from factory import BOB, CODER, HELPER, call, give, packet, setup
from server import Server, module_database, start

from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

PROJECT = "graph"
CROWD_PROJECT = "crowd"
CROWD = 199  # with their parent, a graph of 200 tasks


@dataclass
class Family:
    bob: str  # the board's viewer (he owns both assignees) and the one who moves tasks
    ids: dict[str, str]  # name -> task id
    edges: set[tuple[str, str, str]]  # (kind, from name, to name)
    crowd: str  # a task with CROWD subtasks, in a project of their own


async def _seed(url: str) -> Family:
    """A top task, two subtasks, two under the first; a dependency and a dependent."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)

        async def task(title: str, **fields: Any) -> str:
            fields.setdefault("packet", packet())
            made = await give(store, project=PROJECT, display_title=title, **fields)
            return made.id

        async def working(who: Any, task_id: str) -> None:
            for verb in ("accept_task", "start_task"):
                await call(store, verb, who, task_id)

        ids = {"schema": await task("Write the API schema")}
        ids["top"] = await task("Ship the health check")
        await working(CODER, ids["top"])
        helper = {"by": CODER, "assignee": "bob/helper", "parent_task_id": ids["top"]}
        ids["handler"] = await task(
            "Write the handler", **helper, packet=packet(depends_on=[ids["schema"]])
        )
        ids["docs"] = await task("Document /health", **helper)
        await working(HELPER, ids["handler"])
        coder = {"by": HELPER, "assignee": "bob/coder", "parent_task_id": ids["handler"]}
        ids["test"] = await task("Test the handler", **coder)
        ids["probe"] = await task(
            "Probe the database", **coder, packet=packet(depends_on=[ids["test"]])
        )
        ids["deploy"] = await task("Deploy it", packet=packet(depends_on=[ids["top"]]))
        crowd = await task("A crowd of subtasks")
        for i in range(CROWD):
            await give(
                store, project=CROWD_PROJECT, display_title=f"Part {i}", parent_task_id=crowd
            )
        bob = (await admin.provision_token(store, BOB)).token
        edges = {
            ("parent", "top", "handler"),
            ("parent", "top", "docs"),
            ("parent", "handler", "test"),
            ("parent", "handler", "probe"),
            ("depends_on", "handler", "schema"),
            ("depends_on", "probe", "test"),
            ("depends_on", "deploy", "top"),
        }
        return Family(bob, ids, edges, crowd)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Family]]:
    directory = tmp_path_factory.mktemp("graph")
    with module_database(directory) as url:
        seeded = asyncio.run(_seed(url))
        server = start(url, directory / "logs")
        try:
            yield server, seeded
        finally:
            server.stop()


def _board(page: Any, server: Server, family: Family) -> None:
    page.goto(f"{server.base_url}/board?project={PROJECT}")
    page.fill("#token", family.bob)
    page.click("#token-form button[type=submit]")
    wait_until(page, f"prickleBoard.size >= {len(family.ids)} && prickleBoard.status === 'live'")


def _open_graph(page: Any, task_id: str) -> None:
    page.evaluate(f"prickleBoard.open('{task_id}')")
    page.locator(f"#detail [data-task='{task_id}'] button.graph-open").click()
    wait_until(page, "PrickleGraph.current && PrickleGraph.current.size > 0")


def _drawn_edges(page: Any, names: dict[str, str]) -> set[tuple[str, str, str]]:
    drawn = page.evaluate(
        "[...document.querySelectorAll('.graph-drawing .edge')]"
        ".map((e) => [e.dataset.kind, e.dataset.from, e.dataset.to])"
    )
    return {(kind, names[a], names[b]) for kind, a, b in drawn}


@needs_chromium
def test_the_graph_of_a_tree_with_dependencies_draws_every_node_and_edge(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    names = {v: k for k, v in seeded.ids.items()}
    _board(page, server, seeded)
    _open_graph(page, seeded.ids["top"])

    drawn = page.evaluate(
        "[...document.querySelectorAll('.graph-drawing .node')].map((n) => n.dataset.id)"
    )
    assert sorted(drawn) == sorted(seeded.ids.values())
    assert _drawn_edges(page, names) == seeded.edges
    assert page.evaluate(f"PrickleGraph.current.state('{seeded.ids['top']}')") == "working"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-graph.png"))


@needs_chromium
def test_a_move_recolours_its_node_without_a_reload(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    deploy = seeded.ids["deploy"]
    _board(page, server, seeded)
    _open_graph(page, seeded.ids["top"])
    before = page.evaluate(
        f"getComputedStyle(document.querySelector(\".node[data-id='{deploy}'] rect\")).fill"
    )
    page.evaluate("window.notReloaded = true")

    server.run_data("mutations/accept_task", {"task_id": deploy}, seeded.bob)

    wait_until(page, f"PrickleGraph.current.state('{deploy}') === 'accepted'")
    after = page.evaluate(
        f"getComputedStyle(document.querySelector(\".node[data-id='{deploy}'] rect\")).fill"
    )
    assert after != before
    assert page.evaluate("window.notReloaded") is True
    page.screenshot(path=str(ARTIFACTS / "board-graph-moved.png"))


@needs_chromium
def test_clicking_a_node_opens_its_task_in_the_detail_panel(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    _board(page, server, seeded)
    _open_graph(page, seeded.ids["top"])
    page.click(f".graph-drawing .node[data-id='{seeded.ids['probe']}']")
    page.locator(
        f"#detail [data-task='{seeded.ids['probe']}'] h2:has-text('Probe the database')"
    ).wait_for()
    page.focus(f".graph-drawing .node[data-id='{seeded.ids['schema']}']")
    page.keyboard.press("Enter")
    page.locator(f"#detail [data-task='{seeded.ids['schema']}']").wait_for()
    page.click(".graph-close")
    assert page.locator(".graph-view").count() == 0
    assert page.locator("#board").is_visible()
    _open_graph(page, seeded.ids["top"])
    page.focus(f".graph-drawing .node[data-id='{seeded.ids['top']}']")
    page.keyboard.press("Escape")
    assert page.locator(".graph-view").count() == 0
    # the focus goes back to the chosen task's card, not to the page's body
    assert page.evaluate("document.activeElement.dataset.id") == seeded.ids["top"]


@needs_chromium
def test_on_a_phone_the_graph_fills_the_screen_and_a_node_opens_the_panel(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    page.set_viewport_size({"width": 360, "height": 740})
    _board(page, server, seeded)
    _open_graph(page, seeded.ids["top"])
    assert page.locator(".graph-view").bounding_box()["width"] == 360
    page.screenshot(path=str(ARTIFACTS / "board-graph-360.png"))
    page.click(f".graph-drawing .node[data-id='{seeded.ids['docs']}']")
    page.locator(f"#detail [data-task='{seeded.ids['docs']}']").wait_for()
    assert page.locator(".graph-view").count() == 0


@needs_chromium
def test_axe_finds_no_violation_in_the_detail_panel_or_the_graph(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    _board(page, server, seeded)
    page.evaluate(f"prickleBoard.open('{seeded.ids['top']}')")
    page.locator(f"#detail [data-task='{seeded.ids['top']}']").wait_for()
    found = {"panel": every_violation(page, "#detail")}
    _open_graph(page, seeded.ids["top"])
    found["graph"] = every_violation(page, ".graph-view")
    assert found == {"panel": [], "graph": []}, found


@needs_chromium
def test_axe_finds_no_violation_on_the_board(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    _board(page, server, seeded)
    assert every_violation(page) == []


CAMERA = "PrickleGraph.current.camera"
INSIDE = """(id) => { const s = document.querySelector('.graph-stage').getBoundingClientRect();
  const n = document.querySelector(`.node[data-id='${id}']`).getBoundingClientRect();
  return n.left >= s.left - 1 && n.right <= s.right + 1 && n.top >= s.top - 1
    && n.bottom <= s.bottom + 1; }"""


@needs_chromium
def test_the_graph_fits_itself_zooms_pans_and_highlights_the_chosen_path(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    _board(page, server, seeded)
    _open_graph(page, seeded.ids["top"])
    for task_id in seeded.ids.values():  # fitted: every node in view, none off-screen
        assert page.evaluate(INSIDE, task_id), task_id
    assert page.evaluate("document.querySelectorAll('main, [role=main]').length") >= 1
    assert every_violation(page) == []  # the graph is the page's main landmark now

    fitted = page.evaluate(f"{CAMERA}.zoom")
    page.get_by_role("button", name="zoom in").click()
    zoomed_in = page.evaluate(f"{CAMERA}.zoom")
    assert zoomed_in > fitted
    stage = page.locator(".graph-stage").bounding_box()
    page.mouse.move(stage["x"] + stage["width"] / 2, stage["y"] + stage["height"] / 2)
    page.mouse.wheel(0, 300)  # wheel down: zoom out
    wait_until(page, f"{CAMERA}.zoom < {zoomed_in}")
    page.focus(f".graph-drawing .node[data-id='{seeded.ids['top']}']")
    before = page.evaluate(f"{CAMERA}.box.x")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(f"{CAMERA}.box.x") > before  # the view moved right
    page.keyboard.press("0")
    assert abs(page.evaluate(f"{CAMERA}.zoom") - fitted) < 1e-6

    # choosing the probe lights its way up: probe -> handler -> top
    page.focus(f".graph-drawing .node[data-id='{seeded.ids['probe']}']")
    names = {v: k for k, v in seeded.ids.items()}
    lit = page.evaluate(
        "[...document.querySelectorAll('.edge.on-path')].map(e => [e.dataset.from, e.dataset.to])"
    )
    assert {(names[a], names[b]) for a, b in lit} == {("top", "handler"), ("handler", "probe")}
    page.screenshot(path=str(ARTIFACTS / "board-graph-path.png"))


@needs_chromium
def test_a_graph_of_200_tasks_fits_the_view_with_readable_labels(family, page) -> None:  # type: ignore[no-untyped-def]
    server, seeded = family
    page.set_viewport_size({"width": 1440, "height": 900})
    _board(page, server, seeded)
    started = time.monotonic()
    _open_graph(page, seeded.crowd)
    wait_until(page, f"PrickleGraph.current.size === {CROWD + 1}")
    drawn = time.monotonic() - started
    print(f"graph: {CROWD + 1} tasks drawn in {drawn * 1000:.0f} ms from the Graph button")
    page.screenshot(path=str(ARTIFACTS / "board-graph-200.png"))
    _every_node_reachable_and_readable(page)
    assert drawn < 20  # a hang, not a slow machine
    page.keyboard.press("-")
    page.get_by_role("button", name="fit the graph to the view").click()
    _every_node_reachable_and_readable(page)

    page.click(".graph-close")
    page.set_viewport_size({"width": 390, "height": 844})
    _open_graph(page, seeded.crowd)
    wait_until(page, f"PrickleGraph.current.size === {CROWD + 1}")
    page.screenshot(path=str(ARTIFACTS / "board-graph-200-390.png"))
    # on a phone the labels read at 12 px or more: the graph fits the width, and scrolls
    _every_node_reachable_and_readable(page)


# every node's box inside the stage: the ids of those that are not
OUTSIDE = """(() => { const s = document.querySelector('.graph-stage').getBoundingClientRect();
  return [...document.querySelectorAll('.graph-drawing .node')].filter(n => {
    const b = n.getBoundingClientRect();
    return b.left < s.left - 1 || b.right > s.right + 1 || b.top < s.top - 1
      || b.bottom > s.bottom + 1; }).map(n => n.dataset.id); })()"""
# the smallest label's type, in screen pixels
SMALLEST_TYPE = """Math.min(...[...document.querySelectorAll('.graph-drawing .node tspan')]
  .map(t => parseFloat(getComputedStyle(t).fontSize) * PrickleGraph.current.camera.zoom))"""


def _every_node_reachable_and_readable(page: Any) -> None:
    """Every label at 11 px or more on screen, and every node in view or brought into it when
    it takes the focus (Tab, or a screen reader's move)."""
    smallest = page.evaluate(SMALLEST_TYPE)
    outside = page.evaluate(OUTSIDE)
    print(f"graph: at fit the smallest label is {smallest:.1f} px; {len(outside)} nodes beyond")
    assert smallest >= 11, smallest
    for task_id in outside:
        page.focus(f".graph-drawing .node[data-id='{task_id}']")
        assert page.evaluate(INSIDE, task_id), task_id
    assert page.evaluate(SMALLEST_TYPE) >= 11  # reaching them zoomed nothing out
