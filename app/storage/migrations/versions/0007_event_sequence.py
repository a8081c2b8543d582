"""events_seq: on PostgreSQL, event seqs come from a sequence instead of the counter row

Writers no longer queue on one locked row until their commit; readers stop at the safe
bound instead (see docs/events.md and the log's repository, `Events`). The sequence
continues from the last seq written, so every cursor already handed out keeps its meaning.
SQLite keeps the counter row (one writer at a time, seqs commit in order there).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE SEQUENCE events_seq AS bigint START WITH 1 CACHE 1")
    op.execute(
        "SELECT setval('events_seq', last) FROM (SELECT greatest("
        " (SELECT coalesce(max(seq), 0) FROM events),"
        " (SELECT coalesce(max(last_seq), 0) FROM event_counter)) AS last) AS head"
        " WHERE last > 0"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "UPDATE event_counter SET last_seq = greatest(last_seq,"
        " (SELECT coalesce(max(seq), 0) FROM events),"
        " coalesce(pg_sequence_last_value('events_seq'), 0))"
    )
    op.execute("DROP SEQUENCE events_seq")
