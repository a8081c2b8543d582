"""schedules, schedule_runs and erased_principals

Owner schedules and the one row per run whose key (schedule_id, due_at) makes one task per
due time; the ids of erased persons and agents, which can never be registered again.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def moment(name: str, nullable: bool = False) -> sa.Column[str]:
    """A timestamp as UTC RFC 3339 text, like every other table's."""
    return sa.Column(name, sa.String(length=40), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("project", sa.String(length=39), nullable=False),
        sa.Column("owner", sa.String(length=39), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("assignee", sa.String(length=79), nullable=True),
        sa.Column("capability", JSON, nullable=True),
        sa.Column("packet", JSON, nullable=False),
        sa.Column("display_title", sa.String(), nullable=True),
        sa.Column("turn_budget", sa.Integer(), nullable=True),
        sa.Column("cron", sa.String(length=200), nullable=True),
        sa.Column("every_seconds", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        moment("starts_at", nullable=True),
        moment("ends_at", nullable=True),
        sa.Column("catch_up", sa.String(length=8), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        moment("next_run_at", nullable=True),
        moment("last_run_at", nullable=True),
        sa.Column("last_task_id", sa.String(length=64), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        moment("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.create_index("ix_schedules_next_run_at", ["next_run_at"], unique=False)
        batch_op.create_index("ix_schedules_owner", ["owner"], unique=False)
        batch_op.create_index("ix_schedules_project", ["project"], unique=False)

    op.create_table(
        "schedule_runs",
        sa.Column("schedule_id", sa.String(length=64), nullable=False),
        moment("due_at"),
        sa.Column("task_id", sa.String(length=64), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        moment("created_at"),
        sa.PrimaryKeyConstraint("schedule_id", "due_at"),
    )
    op.create_table(
        "erased_principals",
        sa.Column("id", sa.String(length=79), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        moment("erased_at"),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("erased_principals")
    op.drop_table("schedule_runs")
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_index("ix_schedules_project")
        batch_op.drop_index("ix_schedules_owner")
        batch_op.drop_index("ix_schedules_next_run_at")
    op.drop_table("schedules")
