"""tokens: id, label, expires_at, revoked_at, last_used_at

A token gets an id (what `tokens`, `revoke_token` and `prickle token revoke` name it by;
never the secret), a label, an expiry, its revocation and the minute it was last used.
Tokens made before this migration keep working: each is given an id here.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from app.domain.clock import new_id

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def moment(name: str) -> sa.Column[str]:
    """A timestamp as UTC RFC 3339 text, like every other table's."""
    return sa.Column(name, sa.String(length=40), nullable=True)


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("label", sa.String(length=100), nullable=True))
        batch_op.add_column(moment("last_used_at"))
        batch_op.add_column(moment("expires_at"))
        batch_op.add_column(moment("revoked_at"))
    _give_ids()
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.alter_column("id", existing_type=sa.String(length=64), nullable=False)
        batch_op.create_index("ix_tokens_id", ["id"], unique=True)


def _give_ids() -> None:
    """An id for each token made before this migration, in the order they were made."""
    tokens = sa.table("tokens", sa.column("token_sha256"), sa.column("created_at"), sa.column("id"))
    conn = op.get_bind()
    made = conn.execute(sa.select(tokens.c.token_sha256).order_by(tokens.c.created_at)).all()
    for (digest,) in made:
        conn.execute(tokens.update().where(tokens.c.token_sha256 == digest).values(id=new_id()))


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_index("ix_tokens_id")
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("label")
        batch_op.drop_column("id")
