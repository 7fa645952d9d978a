"""The outbox, webhooks and their dead letters, and the events a consumer gave up on."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    Table,
    Text,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

from cairn.db.models.base import metadata, timestamp

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("subject", Text, nullable=False),
    Column("msg_id", UUID(as_uuid=True), nullable=False, unique=True),
    Column("payload", JSONB, nullable=False),
    # The record's context, for events that copy it from the stored record (revision 0026):
    # published as the payload's "context" key (cairn.events.outbox.published_body).
    Column("context", JSONB, nullable=True),
    timestamp("created_at"),
    timestamp("published_at", nullable=True),
    Index("ix_outbox_pending", "id", postgresql_where=text("published_at IS NULL")),
    Index("ix_outbox_published", "published_at", postgresql_where=text("published_at IS NOT NULL")),
)

webhooks = Table(
    "webhooks",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("selector", JSONB),
    Column("active", Boolean, nullable=False, server_default=true()),
    timestamp("created_at"),
    Index("ix_webhooks_owner_active", "owner_id", "active"),
)

webhook_dlq = Table(
    "webhook_dlq",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("webhook_id", UUID(as_uuid=True), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("last_error", Text, nullable=False),
    timestamp("created_at"),
    timestamp("updated_at"),
    timestamp("requeued_at", nullable=True),  # asked to retry, not yet claimed
    Index("ix_webhook_dlq_owner_created", "owner_id", "created_at"),
    Index(
        "ix_webhook_dlq_requeued", "requeued_at", postgresql_where=text("requeued_at IS NOT NULL")
    ),
    Index("uq_webhook_dlq_webhook_event", "webhook_id", "event_id", unique=True),
)

# Breadcrumb events a JetStream consumer gave up on (revision 0011): recorded, never dropped.
event_dead_letters = Table(
    "event_dead_letters",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("consumer", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("stream_sequence", BigInteger, nullable=False),
    Column("event_id", Text),
    Column("event_type", Text),
    Column("breadcrumb_id", UUID(as_uuid=True)),
    Column("deliveries", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    timestamp("created_at"),
    Index("uq_event_dead_letters_message", "consumer", "stream_sequence", unique=True),
    Index("ix_event_dead_letters_owner_created", "owner_id", "created_at"),
)
