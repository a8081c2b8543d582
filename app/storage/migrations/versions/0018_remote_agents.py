"""remote_agents and remote_tasks: A2A agents as assignees

A remote agent is one of an owner's agents that lives elsewhere and speaks A2A: its card's
URL, the credential sent to it, and, as a durable reader of the event log, its cursor
(`read_to`) and the lease of the one process dispatching to it. Each task sent to one is a
row of remote_tasks: the stable message id that sent it, the remote task, the question
already asked and the message that answered it, the status update last kept as a
checkpoint, and whether it is over.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def moment(name: str, nullable: bool = False) -> sa.Column[str]:
    """A timestamp as UTC RFC 3339 text, like every other table's."""
    return sa.Column(name, sa.String(length=40), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "remote_agents",
        sa.Column("agent_id", sa.String(length=79), nullable=False),
        sa.Column("owner", sa.String(length=39), nullable=False),
        sa.Column("card_url", sa.String(length=2048), nullable=False),
        sa.Column("credential", sa.String(length=4096), nullable=True),
        moment("created_at"),
        sa.Column("read_to", sa.BigInteger(), nullable=False),
        sa.Column("leased_by", sa.String(length=64), nullable=True),
        moment("lease_until", nullable=True),
        sa.PrimaryKeyConstraint("agent_id"),
    )
    op.create_index("ix_remote_agents_owner", "remote_agents", ["owner"])
    op.create_table(
        "remote_tasks",
        sa.Column("task_id", sa.String(length=64), nullable=False),
        sa.Column("agent_id", sa.String(length=79), nullable=False),
        sa.Column("message_id", sa.String(length=100), nullable=False),
        sa.Column("remote_task_id", sa.String(length=200), nullable=True),
        moment("sent_at", nullable=True),
        sa.Column("asked", sa.String(length=200), nullable=True),
        sa.Column("answered", sa.String(length=100), nullable=True),
        sa.Column("checkpointed", sa.String(length=200), nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("task_id"),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], name="fk_remote_tasks_task_id"),
    )
    op.create_index("ix_remote_tasks_agent_id", "remote_tasks", ["agent_id"])


def downgrade() -> None:
    op.drop_index("ix_remote_tasks_agent_id", table_name="remote_tasks")
    op.drop_table("remote_tasks")
    op.drop_index("ix_remote_agents_owner", table_name="remote_agents")
    op.drop_table("remote_agents")
