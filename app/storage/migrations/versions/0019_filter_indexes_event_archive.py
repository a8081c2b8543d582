"""the tasks page's filters read from indexes in task id order

`tasks(...)` pages visible tasks by id after a cursor, filtered by project, state, assignee
or requester (`task_page`). Each filter now has an index ending in `id`, so a page
reads its rows in order and stops after the page, however many tasks match:
`(project, state, id)` beside `(project, id)`, `(state, id)`, `(assignee, id)` (replacing
the one-column `(assignee)`, whose lookups it serves as well) and `(requester, id)`. Before,
a project and a state read every task of the project's index (a tenth of a million tasks for
a large project) to find the page's few in that state.

And the event log's archive (`prickle events archive`): `events_archive`, the columns of
`events` read by `(task_id, seq)`, and `event_archive_runs`, one row per archiving.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

ADDED = {
    "ix_tasks_project_state": ["project", "state", "id"],
    "ix_tasks_state": ["state", "id"],
    "ix_tasks_requester": ["requester", "id"],
}


def upgrade() -> None:
    op.drop_index("ix_tasks_assignee", table_name="tasks")
    op.create_index("ix_tasks_assignee", "tasks", ["assignee", "id"])
    for name, columns in ADDED.items():
        op.create_index(name, "tasks", columns)
    op.create_table(
        "events_archive",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        *_event_columns(),
    )
    op.create_index("ix_events_archive_task_seq", "events_archive", ["task_id", "seq"])
    op.create_table(
        "event_archive_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("ended_before", sa.String(length=40), nullable=False),
        sa.Column("archived_to", sa.BigInteger(), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
    )


def _event_columns() -> list[sa.Column[Any]]:
    """The columns of `events` after its seq, as they stand at this revision."""
    json: Any = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    text = [("task_id", 64, False), ("project", 39, False), ("kind", 16, False)]
    text += [("from_state", 16, True), ("to_state", 16, False), ("waiting_on", 16, True)]
    text += [("verb", 32, False), ("actor", 79, True), ("at", 40, False)]
    columns: list[sa.Column[Any]] = [
        sa.Column(n, sa.String(length=size), nullable=null) for n, size, null in text
    ]
    columns.append(sa.Column("version", sa.Integer(), nullable=False))
    columns.append(sa.Column("note", sa.String(), nullable=True))
    columns.append(sa.Column("task", json, nullable=False))
    columns.append(sa.Column("wait_agent", sa.String(length=79), nullable=True))
    return columns


def downgrade() -> None:
    op.drop_table("event_archive_runs")
    op.drop_index("ix_events_archive_task_seq", table_name="events_archive")
    op.drop_table("events_archive")
    for name in ADDED:
        op.drop_index(name, table_name="tasks")
    op.drop_index("ix_tasks_assignee", table_name="tasks")
    op.create_index("ix_tasks_assignee", "tasks", ["assignee"])
