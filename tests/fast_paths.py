"""Tests of a fast path itself (`@pytest.mark.fast_path`) are skipped when the run turns the
fast paths off (PRICKLE_FAST_PATHS=off): what they test is not there to test. Every other
test runs in both positions, and answers the same."""

from __future__ import annotations

import pytest

from app import tuning

SKIP = pytest.mark.skip(reason="a test of a fast path itself, and PRICKLE_FAST_PATHS is off")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if tuning.FAST_PATHS.value():
        return
    for item in items:
        if item.get_closest_marker("fast_path") is not None:
            item.add_marker(SKIP)
