"""Events: wake the outbox relay on commit; webhooks, agent secrets and the dead-letter queue.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NOTIFY is delivered at commit, so the relay wakes exactly when rows become visible.
    op.execute(
        """
        CREATE FUNCTION cairn_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('cairn_outbox', '');
            RETURN NULL;
        END $$
        """
    )
    op.execute(
        "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox"
        " FOR EACH STATEMENT EXECUTE FUNCTION cairn_outbox_notify()"
    )
    op.execute("CREATE INDEX ix_outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL")
    op.create_table(
        "agent_secrets",
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("secret", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()")),
        sa.PrimaryKeyConstraint("owner_id", "agent_id", name="pk_agent_secrets"),
    )
    op.create_table(
        "webhooks",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("selector", JSONB),
        sa.Column("active", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()")),
    )
    op.create_index("ix_webhooks_owner_active", "webhooks", ["owner_id", "active"])
    op.create_table(
        "webhook_dlq",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("webhook_id", UUID(as_uuid=True), nullable=False),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("event_id", sa.Text, nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()")),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()")),
    )
    op.create_index("ix_webhook_dlq_owner_created", "webhook_dlq", ["owner_id", "created_at"])


def downgrade() -> None:
    op.drop_table("webhook_dlq")
    op.drop_table("webhooks")
    op.drop_table("agent_secrets")
    op.execute("DROP INDEX ix_outbox_published")
    op.execute("DROP TRIGGER outbox_notify ON outbox")
    op.execute("DROP FUNCTION cairn_outbox_notify()")
