"""A2A: agents.card_public, webhooks.payload and webhooks.push_token

An agent's A2A card (`/a2a/{owner}/{agent}/.well-known/agent-card.json`) needs a valid
token unless its owner marks it public (`set_agent_card_public`). Every agent starts
private. An A2A push notification config is a webhook whose `payload` is `a2a` (an A2A
StreamResponse instead of Prickle's `task.event`), sending back the config's `push_token`;
every existing webhook keeps Prickle's payload.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.add_column(
            sa.Column("card_public", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(
            sa.Column("payload", sa.String(16), nullable=False, server_default="task.event")
        )
        batch.add_column(sa.Column("push_token", sa.String(1000), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("push_token")
        batch.drop_column("payload")
    with op.batch_alter_table("agents") as batch:
        batch.drop_column("card_public")
