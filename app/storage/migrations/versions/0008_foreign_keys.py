"""foreign keys: tasks.parent_task_id and every column naming a task refer to tasks.id

tasks.parent_task_id, events.task_id, checkpoints.task_id, results.task_id,
approvals.task_id and schedule_runs.task_id now refer to tasks.id. webhooks.task_id does
not: it is a filter, which may name a task its owner cannot see or that does not exist.

No task is ever deleted, so an existing database holds no row naming a missing task;
if one does (edited by hand), the upgrade stops and says which table holds how many,
changing nothing. On SQLite the tables are rebuilt (batch mode) with the constraints
checked off during the upgrade and every row checked before it commits
(app.storage.migrate).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# (table, column): each refers to tasks.id through the constraint fk_<table>_<column>
REFERENCES = (
    ("tasks", "parent_task_id"),
    ("events", "task_id"),
    ("checkpoints", "task_id"),
    ("results", "task_id"),
    ("approvals", "task_id"),
    ("schedule_runs", "task_id"),
)


def name_of(table: str, column: str) -> str:
    return f"fk_{table}_{column}"


def orphans(table: str, column: str) -> int:
    """Rows of `table` whose `column` names a task that does not exist."""
    found = op.get_bind().execute(
        sa.text(
            f"SELECT count(*) FROM {table} AS r WHERE r.{column} IS NOT NULL"
            f" AND NOT EXISTS (SELECT 1 FROM tasks AS t WHERE t.id = r.{column})"
        )
    )
    return int(found.scalar_one())


def upgrade() -> None:
    missing = {f"{t}.{c}": n for t, c in REFERENCES if (n := orphans(t, c))}
    if missing:
        listed = ", ".join(f"{where}: {n}" for where, n in missing.items())
        raise RuntimeError(f"rows name tasks that do not exist ({listed}); fix them, then migrate")
    for table, column in REFERENCES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_foreign_key(name_of(table, column), "tasks", [column], ["id"])


def downgrade() -> None:
    for table, column in reversed(REFERENCES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(name_of(table, column), type_="foreignkey")
