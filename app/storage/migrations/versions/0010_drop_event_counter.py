"""event_counter dropped: no writer numbers events from it any more

PostgreSQL draws seqs from the events_seq sequence since 0007; SQLite numbers them after
the newest (seq is the events table's rowid) since 0009. The one counter row was left
behind by both. A downgrade recreates the table with its row at the newest seq, where the
writers of 0009's downgrade (SQLite) and 0007's (PostgreSQL) expect it.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("event_counter")


def downgrade() -> None:
    op.create_table(
        "event_counter",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute(
        "INSERT INTO event_counter (id, last_seq) SELECT 1, coalesce(max(seq), 0) FROM events"
    )
