"""events.wait_agent: the agent a waiting task names in wait_on, recorded on each event

The agent named in wait_on(on: agent) may see the task while it waits; a subscriber's
filter decides visibility from the event alone, so the event must carry that agent.
Existing events of tasks that wait on an agent now are filled from the task.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("wait_agent", sa.String(length=79), nullable=True))
    op.execute(
        "UPDATE events SET wait_agent = (SELECT tasks.wait_agent FROM tasks"
        " WHERE tasks.id = events.task_id AND tasks.waiting_on = 'agent')"
        " WHERE events.waiting_on = 'agent'"
    )


def downgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("wait_agent")
