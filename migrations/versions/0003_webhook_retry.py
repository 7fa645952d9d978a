"""Webhooks: DLQ entries can be requeued, and one entry per (webhook, event).

``requeued_at`` marks an entry asked to be retried (``POST /dlq/{id}/retry``); whichever
server's delivery loop claims it first redelivers it. The unique index lets a redelivered
event that fails again update its entry instead of adding a second one.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("webhook_dlq", sa.Column("requeued_at", sa.DateTime(timezone=True)))
    op.create_index(
        "ix_webhook_dlq_requeued",
        "webhook_dlq",
        ["requeued_at"],
        postgresql_where=sa.text("requeued_at IS NOT NULL"),
    )
    op.create_index(
        "uq_webhook_dlq_webhook_event", "webhook_dlq", ["webhook_id", "event_id"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_webhook_dlq_webhook_event", table_name="webhook_dlq")
    op.drop_index("ix_webhook_dlq_requeued", table_name="webhook_dlq")
    op.drop_column("webhook_dlq", "requeued_at")
