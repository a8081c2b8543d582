"""axe-core in the page under test: the serious and critical accessibility violations.

axe-core is vendored like the pages' own libraries (app/static/vendor.json, fetched by
scripts/vendor.py) and served from /vendor, so the pages' strict CSP lets it run.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

SERIOUS = ("serious", "critical")

RUN = """(selector) => axe.run(selector ? document.querySelector(selector) : document,
  { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })))"""


def violations(
    page: Any, selector: str | None = None, impacts: tuple[str, ...] | None = SERIOUS
) -> list[dict[str, Any]]:
    """The serious and critical violations in the page (or in the element `selector`);
    `impacts=None`: every violation, whatever its impact."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(url=urljoin(page.url, "/vendor/axe.min.js"))
    found = page.evaluate(RUN, selector)
    return [v for v in found if impacts is None or v["impact"] in impacts]


def every_violation(page: Any, selector: str | None = None) -> list[dict[str, Any]]:
    """Every violation axe-core finds, minor ones included."""
    return violations(page, selector, impacts=None)
