"""`prickle events archive`: the events of tasks that ended before a date moved out of the
event log (storage's `archive`), to `events_archive` or a JSON Lines file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from app.domain.clock import now, rfc3339
from app.domain.errors import InvalidInput
from app.storage.archive import Archived, archive
from app.storage.store import Store


def ended_before(text: str) -> str:
    """A date (`2026-01-01`, midnight UTC) or an RFC 3339 moment, as the stored moments are
    written; InvalidInput for anything else, or a moment not in the past."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"--ended-before: {text[:80]!r} is not a date (2026-01-01) or an RFC 3339 moment"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment > now():
        raise InvalidInput(f"--ended-before: {text!r} is not in the past")
    return rfc3339(moment)


async def archive_events(store: Store, before: str, jsonl: Path | None) -> Archived:
    """Move the events of the tasks ended before `before` out of the log, in one transaction;
    with `jsonl`, into that file (a JSON object a line, the event's columns) and out of the
    database; the file is removed again when the events are not moved. Refused (Conflict)
    while an enabled webhook, or with `jsonl` any webhook, has not read that far."""
    moment = ended_before(before)
    if jsonl is None:
        async with store.write() as tx:
            return await archive(tx, moment, rfc3339(now()), None)
    out = jsonl.open("xb")  # a new file: one already there is never touched

    def write(rows: list[dict[str, Any]]) -> None:
        out.writelines(orjson.dumps(row) + b"\n" for row in rows)

    try:
        with out:
            async with store.write() as tx:
                return await archive(tx, moment, rfc3339(now()), write)
    except BaseException:  # refused, or not committed: the events stay in the log, alone
        jsonl.unlink(missing_ok=True)
        raise
