"""The evidence report, computed by the server from the result and the task."""

from __future__ import annotations

from datetime import timedelta

import pytest
from factory import (
    CODER,
    drive,
    evidence,
    result,
)

from app.domain.clock import now, rfc3339
from app.domain.errors import InvalidInput
from app.domain.evidence import check_indexes, failing_criteria, report
from app.service import verbs

pytestmark = pytest.mark.cast

NOW = now()
FRESH = rfc3339(NOW - timedelta(hours=1))
OLD = rfc3339(NOW - timedelta(days=8))


def test_coverage_lists_for_each_criterion_the_evidence_citing_it() -> None:
    items = [evidence([0]), evidence([0, 2]), evidence(), evidence([2])]
    got = report(items, 3, NOW, None)
    assert got["coverage"] == [
        {"criterion": 0, "evidence": [0, 1]},
        {"criterion": 1, "evidence": []},
        {"criterion": 2, "evidence": [1, 3]},
    ]
    assert got["general"] == [2]
    assert got["uncovered"] == [1]
    assert got["stale"] == []
    assert got["complete"] is False


def test_a_report_with_everything_covered_and_fresh_is_complete() -> None:
    got = report([evidence([0, 1], observed_at=FRESH)], 2, NOW, None)
    assert (got["uncovered"], got["stale"], got["complete"]) == ([], [], True)


def test_evidence_older_than_seven_days_is_stale() -> None:
    got = report([evidence([0], observed_at=OLD), evidence([0])], 1, NOW, None)
    assert got["stale"] == [{"evidence": 0, "why": "older_than_7_days"}]
    assert got["complete"] is False


def test_evidence_observed_before_the_previous_revision_is_stale() -> None:
    previous = rfc3339(NOW - timedelta(minutes=30))
    got = report([evidence([0], observed_at=FRESH)], 1, NOW, previous)
    assert got["stale"] == [{"evidence": 0, "why": "before_previous_revision"}]


def test_evidence_observed_after_the_previous_revision_is_fresh() -> None:
    previous = rfc3339(NOW - timedelta(hours=2))
    assert report([evidence([0], observed_at=FRESH)], 1, NOW, previous)["stale"] == []


def test_evidence_without_observed_at_is_never_stale() -> None:
    assert report([evidence([0])], 1, NOW, rfc3339(NOW))["stale"] == []


def test_a_criterion_whose_citing_evidence_is_all_stale_fails() -> None:
    items = [evidence([0], observed_at=OLD), evidence([1], observed_at=OLD), evidence([1])]
    assert failing_criteria(report(items, 3, NOW, None)) == [0, 2]


def test_indexes_must_name_existing_criteria_and_artifacts() -> None:
    check_indexes([evidence([0, 1], artifact=0)], 2, 1)
    with pytest.raises(InvalidInput, match="criteria: 2 is out of range"):
        check_indexes([evidence([2])], 2, 0)
    with pytest.raises(InvalidInput, match="artifact: 0 is out of range"):
        check_indexes([evidence([0], artifact=0)], 2, 0)


async def test_the_server_attaches_its_own_report_to_every_result(store) -> None:
    task = await drive(store, "working")
    items = [evidence([0], observed_at=OLD), evidence()]
    done = await verbs.return_result(store, CODER, task.id, result(items))
    assert done.result["evidence_report"] == {
        "coverage": [{"criterion": 0, "evidence": [0]}, {"criterion": 1, "evidence": []}],
        "general": [1],
        "uncovered": [1],
        "stale": [{"evidence": 0, "why": "older_than_7_days"}],
        "complete": False,
    }
    assert done.state == "completed"  # v0 checks the shape only


def test_an_evidence_url_that_is_not_a_uri_is_invalid_input() -> None:
    from app.domain import shapes
    from app.domain.errors import InvalidInput

    with pytest.raises(InvalidInput, match="url"):
        shapes.check("evidence", [{"kind": "link", "summary": "see", "url": "not a uri"}])
    shapes.check("evidence", [{"kind": "link", "summary": "see", "url": "https://example.org/x"}])
