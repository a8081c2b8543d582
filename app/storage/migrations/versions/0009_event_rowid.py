"""events.seq is the table's rowid on SQLite; the counter row is no longer used there

On SQLite only `INTEGER PRIMARY KEY` names the rowid: `BIGINT PRIMARY KEY` made a second
b-tree, kept beside the table, and a writer numbered its events from the counter row. Now
the events are the rowid's own b-tree, and a writer numbers them after the newest seq
(one writer at a time, so seqs still commit in order): every append writes two pages less
and no counter. The table is rebuilt (batch mode) with its seqs, constraints and indexes.
On a downgrade the counter is set to the newest seq. PostgreSQL is unchanged.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _seq_as(type_: sa.types.TypeEngine[int], was: sa.types.TypeEngine[int]) -> None:
    with op.batch_alter_table("events", recreate="always") as batch_op:
        batch_op.alter_column("seq", type_=type_, existing_type=was, existing_nullable=False)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _seq_as(sa.Integer(), sa.BigInteger())


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _seq_as(sa.BigInteger(), sa.Integer())
        op.execute("UPDATE event_counter SET last_seq = (SELECT coalesce(max(seq), 0) FROM events)")
