"""the inbox oldest waiting first: tasks.moved_at and the inbox's indexes ending in it

`moved_at` is when the task last moved (a checkpoint is no move), so a task that waits on
someone has waited since then. The inbox (`Inbox`) reads each of
its branches from an index in `(moved_at, id)` order: `(requester_owner, state, waiting_on,
moved_at, id)`, `(assignee_owner, state, waiting_on, moved_at, id)`, `(wait_agent, moved_at,
id)`, replacing 0016's, which ended in `id`. An existing task's `moved_at` is the time of its
last event that was not a checkpoint, or where its events were archived, its `updated_at`.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

OWNERS = {
    "ix_tasks_assignee_owner": "assignee_owner",
    "ix_tasks_requester_owner": "requester_owner",
}

BACKFILL = """
UPDATE tasks SET moved_at = COALESCE(
  (SELECT max(e.at) FROM events e WHERE e.task_id = tasks.id AND e.kind <> 'checkpointed'),
  updated_at)
"""


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("moved_at", sa.String(40), nullable=True))
    op.execute(BACKFILL)
    for name, column in OWNERS.items():
        op.drop_index(name, table_name="tasks")
        op.create_index(name, "tasks", [column, "state", "waiting_on", "moved_at", "id"])
    op.drop_index("ix_tasks_wait_agent", table_name="tasks")
    op.create_index("ix_tasks_wait_agent", "tasks", ["wait_agent", "moved_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_tasks_wait_agent", table_name="tasks")
    op.create_index("ix_tasks_wait_agent", "tasks", ["wait_agent", "id"])
    for name, column in OWNERS.items():
        op.drop_index(name, table_name="tasks")
        op.create_index(name, "tasks", [column, "state", "waiting_on", "id"])
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("moved_at")
