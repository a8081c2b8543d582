"""webhooks and webhook_deliveries

A webhook is a durable reader of the event log with its own cursor (`read_to`, and
`last_cursor`, the last event delivered), its filters, its signing secret, its state of
failure, and the lease of the one process delivering it. Each delivery attempt is a row of
webhook_deliveries (the last 1,000 per webhook are kept).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def moment(name: str, nullable: bool = False) -> sa.Column[str]:
    """A timestamp as UTC RFC 3339 text, like every other table's."""
    return sa.Column(name, sa.String(length=40), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=79), nullable=False),
        sa.Column("owner_kind", sa.String(length=8), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("project", sa.String(length=39), nullable=True),
        sa.Column("task_id", sa.String(length=64), nullable=True),
        sa.Column("assignee", sa.String(length=79), nullable=True),
        sa.Column("kinds", JSON, nullable=True),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("secret", sa.String(length=100), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.String(), nullable=True),
        sa.Column("last_cursor", sa.BigInteger(), nullable=False),
        sa.Column("read_to", sa.BigInteger(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        moment("failing_since", nullable=True),
        moment("next_attempt_at", nullable=True),
        sa.Column("leased_by", sa.String(length=64), nullable=True),
        moment("lease_until", nullable=True),
        moment("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.create_index("ix_webhooks_owner", ["owner"], unique=False)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.String(length=64), nullable=False),
        sa.Column("event_cursor", sa.BigInteger(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        moment("at"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_deliveries_webhook_id", ["webhook_id", "id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
