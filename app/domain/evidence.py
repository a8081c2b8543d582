"""The evidence report, always computed by the server from the result and the task."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.domain.clock import parse_rfc3339
from app.domain.errors import InvalidInput
from app.domain.task import JSON

STALE_AFTER = timedelta(days=7)


def check_indexes(evidence: list[JSON], criteria_count: int, artifact_count: int) -> None:
    """Every cited criterion and artifact must exist on this task and this result."""
    for i, item in enumerate(evidence):
        for c in item.get("criteria", []):
            if c >= criteria_count:
                raise InvalidInput(
                    f"result.evidence.{i}.criteria: {c} is out of range "
                    f"(the task has {criteria_count} acceptance criteria)"
                )
        a = item.get("artifact")
        if a is not None and a >= artifact_count:
            raise InvalidInput(
                f"result.evidence.{i}.artifact: {a} is out of range "
                f"(the result has {artifact_count} artifacts)"
            )


def report(
    evidence: list[JSON], criteria_count: int, now: datetime, previous_returned_at: str | None
) -> JSON:
    coverage = [
        {
            "criterion": c,
            "evidence": [i for i, e in enumerate(evidence) if c in e.get("criteria", [])],
        }
        for c in range(criteria_count)
    ]
    general = [i for i, e in enumerate(evidence) if not e.get("criteria")]
    uncovered = [row["criterion"] for row in coverage if not row["evidence"]]
    stale = [
        {"evidence": i, "why": why}
        for i, e in enumerate(evidence)
        if (why := staleness(e, now, previous_returned_at))
    ]
    return {
        "coverage": coverage,
        "general": general,
        "uncovered": uncovered,
        "stale": stale,
        "complete": not uncovered and not stale,
    }


def staleness(item: JSON, now: datetime, previous_returned_at: str | None) -> str | None:
    observed = item.get("observed_at")
    if observed is None:
        return None
    seen = parse_rfc3339(observed)
    if now - seen > STALE_AFTER:
        return "older_than_7_days"
    if previous_returned_at is not None and seen < parse_rfc3339(previous_returned_at):
        return "before_previous_revision"
    return None


def failing_criteria(report_: JSON) -> list[int]:
    """Criteria with no evidence, or whose every citing evidence is stale."""
    stale = {s["evidence"] for s in report_["stale"]}
    return [
        row["criterion"]
        for row in report_["coverage"]
        if not row["evidence"] or all(i in stale for i in row["evidence"])
    ]
