"""Headless Chromium for the tests of pages: Debian's `chromium` driven by the `playwright`
package (never `playwright install`); without /usr/bin/chromium the browser tests skip.
Screenshots and figures go to test-artifacts/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts"
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"no {CHROMIUM}: install Debian's chromium (apt-get install -y chromium)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab; the test fails on any script error or refused request in it."""
    context = browser.new_context(viewport={"width": 1680, "height": 1000})
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    try:
        yield tab
    finally:
        context.close()
    assert not problems, problems


def wait_until(page: Any, script: str, timeout: float = 20) -> Any:
    """Poll a JS expression until it is truthy. (The page's CSP forbids eval, which
    Playwright's wait_for_function needs; evaluate() goes through the debugger instead.)"""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout}s: {script}")
        time.sleep(0.05)
