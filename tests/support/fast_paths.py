"""Tests of a fast path itself (`@pytest.mark.fast_path`) are skipped where the server runs
the plain path: the run turns the fast paths off (PRICKLE_FAST_PATHS=off), or a library
lacks what they use (app/compat). What they test is not there to test. Every other test
runs in both positions, and answers the same."""

from __future__ import annotations

import pytest

from app.compat import sqlalchemy, strawberry
from app.settings import current


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("fast_path") is None:
        return
    if not current().fast_paths:
        pytest.skip("a test of a fast path itself, and PRICKLE_FAST_PATHS is off")
    if not (sqlalchemy.usable() and strawberry.usable()):
        pytest.skip("a test of a fast path itself, and a library lacks what the fast paths use")
