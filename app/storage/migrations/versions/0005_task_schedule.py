"""tasks.schedule_id and tasks.schedule_version: the owner schedule run that made a task

A task handed off by an owner schedule names the schedule and its version at that run, for
its result's lineage cause `{kind: owner_schedule, schedule_id, version, task_id, owner}`.
Other tasks leave both null.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("schedule_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_column("schedule_version")
        batch_op.drop_column("schedule_id")
