"""task_links: each step of a task's graph, written with the task

`task_graph` walked from a task over every task its caller could see (their `depends_on`
unpacked at each step), so it grew with all the tasks, not with the graph. Now each step
(to and from a parent, to and from each task a packet depends on) is a row keyed by where it
starts, written with the task, and the walk reads the steps of the tasks it reached only.
The upgrade writes the steps of every existing task.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_PARENTS = (
    "INSERT INTO task_links (src, way, dst)"
    " SELECT id, 'up', parent_task_id FROM tasks WHERE parent_task_id IS NOT NULL"
    " UNION SELECT parent_task_id, 'down', id FROM tasks WHERE parent_task_id IS NOT NULL"
)
# each task's depends_on, unpacked: (task id, named id)
_NAMED = {
    "sqlite": "SELECT t.id AS task_id, n.value AS named FROM tasks AS t,"
    " json_each(t.packet, '$.depends_on') AS n",
    "postgresql": "SELECT t.id AS task_id, n.named FROM tasks AS t,"
    " jsonb_array_elements_text(coalesce(t.packet -> 'depends_on', '[]'::jsonb)) AS n(named)"
    " WHERE jsonb_typeof(t.packet -> 'depends_on') = 'array'",
}


def upgrade() -> None:
    op.create_table(
        "task_links",
        sa.Column("src", sa.String(length=64), nullable=False),
        sa.Column("way", sa.String(length=4), nullable=False),
        sa.Column("dst", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("src", "way", "dst"),
    )
    named = _NAMED[op.get_bind().dialect.name]
    op.execute(_PARENTS)
    op.execute(
        f"INSERT INTO task_links (src, way, dst) SELECT task_id, 'out', named FROM ({named}) AS d"
        f" UNION SELECT named, 'in', task_id FROM ({named}) AS d"
    )


def downgrade() -> None:
    op.drop_table("task_links")
