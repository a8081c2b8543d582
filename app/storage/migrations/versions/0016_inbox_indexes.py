"""the inbox's indexes: what waits on a principal, read in task id order

The inbox (`Inbox`) reads each of its branches from an index in
task id order: `(requester_owner, state, waiting_on, id)` for results to decide and
questions on the requester side, `(assignee_owner, state, waiting_on, id)` for held handoffs
and questions to the assignee's owner, `(wait_agent, id)` for questions put to an agent. The
first two replace the owners' one-column indexes, whose lookups they serve as well.

Revision ID: 0016
Revises: 0011
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0011"
branch_labels = None
depends_on = None

WIDER = {
    "ix_tasks_assignee_owner": "assignee_owner",
    "ix_tasks_requester_owner": "requester_owner",
}


def upgrade() -> None:
    for name, column in WIDER.items():
        op.drop_index(name, table_name="tasks")
        op.create_index(name, "tasks", [column, "state", "waiting_on", "id"])
    op.create_index("ix_tasks_wait_agent", "tasks", ["wait_agent", "id"])


def downgrade() -> None:
    op.drop_index("ix_tasks_wait_agent", table_name="tasks")
    for name, column in WIDER.items():
        op.drop_index(name, table_name="tasks")
        op.create_index(name, "tasks", [column])
