"""A2A push configs' authentication: webhooks.push_auth

An A2A push notification config may name how its receiver authenticates the server
(`authentication: {scheme: "Bearer" | "Basic", credentials}`, A2A v1.0 section 4.3.3):
`push_auth` holds the `Authorization` header sent with each of its deliveries (the scheme and
the credentials), never shown again. Every existing webhook has none.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(sa.Column("push_auth", sa.String(2100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("push_auth")
