"""Table definitions (SQLAlchemy Core). Alembic revisions in ``migrations/`` create them."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    REAL,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

EMBEDDING_DIM = 384

metadata = MetaData()


def _timestamp(name: str, *, nullable: bool = False) -> Column[object]:
    default = None if nullable else func.now()
    return Column(name, DateTime(timezone=True), nullable=nullable, server_default=default)


tenants = Table(
    "tenants",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    _timestamp("created_at"),
)

breadcrumbs = Table(
    "breadcrumbs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("schema_name", Text),
    Column("title", Text, nullable=False),
    Column("description", Text),
    Column("semantic_version", Text),
    Column("tags", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("context", JSONB, nullable=False),
    Column("llm_hints", JSONB),
    Column("visibility", Text, nullable=False, server_default="team"),
    Column("sensitivity", Text, nullable=False, server_default="low"),
    Column("version", Integer, nullable=False, server_default="1"),
    Column("checksum", Text, nullable=False),
    Column("size_bytes", Integer, nullable=False),
    Column("ttl", DateTime(timezone=True)),
    _timestamp("created_at"),
    _timestamp("updated_at"),
    Column("created_by", Text),
    Column("updated_by", Text),
    Column("llm_text", Text),
    Column("embedding", Vector(EMBEDDING_DIM)),
    Column("entity_keywords", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Index("ix_breadcrumbs_tags", "tags", postgresql_using="gin"),
    Index("ix_breadcrumbs_entity_keywords", "entity_keywords", postgresql_using="gin"),
    Index(
        "ix_breadcrumbs_owner_schema_updated", "owner_id", "schema_name", text("updated_at DESC")
    ),
    Index("ix_breadcrumbs_owner_updated", "owner_id", text("updated_at DESC"), text("id DESC")),
    Index(
        "ix_breadcrumbs_embedding_hnsw",
        "embedding",
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
    Index("ix_breadcrumbs_ttl", "ttl", postgresql_where=text("ttl IS NOT NULL")),
    Index(
        "ix_breadcrumbs_unembedded",
        "updated_at",
        postgresql_where=text("embedding IS NULL AND llm_text IS NOT NULL"),
    ),
)

breadcrumb_history = Table(
    "breadcrumb_history",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column(
        "breadcrumb_id",
        UUID(as_uuid=True),
        ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("version", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("tags", ARRAY(Text), nullable=False),
    Column("context", JSONB, nullable=False),
    Column("checksum", Text, nullable=False),
    Column("change", Text, nullable=False),
    _timestamp("updated_at"),
    Column("updated_by", Text),
    UniqueConstraint("breadcrumb_id", "version", name="uq_history_breadcrumb_version"),
)

breadcrumb_edges = Table(
    "breadcrumb_edges",
    metadata,
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column(
        "from_id",
        UUID(as_uuid=True),
        ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column(
        "to_id",
        UUID(as_uuid=True),
        ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("edge_type", SmallInteger, nullable=False),
    Column("weight", REAL, nullable=False, server_default="1"),
    _timestamp("created_at"),
    PrimaryKeyConstraint("from_id", "to_id", "edge_type", name="pk_breadcrumb_edges"),
    Index("ix_edges_to", "to_id", "edge_type"),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("subject", Text, nullable=False),
    Column("msg_id", UUID(as_uuid=True), nullable=False, unique=True),
    Column("payload", JSONB, nullable=False),
    _timestamp("created_at"),
    _timestamp("published_at", nullable=True),
    Index("ix_outbox_pending", "id", postgresql_where=text("published_at IS NULL")),
    Index("ix_outbox_published", "published_at", postgresql_where=text("published_at IS NOT NULL")),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("key", Text, nullable=False),
    Column("breadcrumb_id", UUID(as_uuid=True), nullable=False),
    Column("request_hash", Text, nullable=False),
    Column("response", JSONB, nullable=False),
    _timestamp("created_at"),
    PrimaryKeyConstraint("owner_id", "key", name="pk_idempotency_keys"),
)

agents = Table(
    "agents",
    metadata,
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("roles", ARRAY(Text), nullable=False),
    _timestamp("created_at"),
    _timestamp("updated_at"),
    PrimaryKeyConstraint("owner_id", "agent_id", name="pk_agents"),
)

agent_secrets = Table(
    "agent_secrets",
    metadata,
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("secret", Text, nullable=False),
    _timestamp("updated_at"),
    PrimaryKeyConstraint("owner_id", "agent_id", name="pk_agent_secrets"),
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
    _timestamp("created_at"),
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
    _timestamp("created_at"),
    _timestamp("updated_at"),
    _timestamp("requeued_at", nullable=True),  # asked to retry, not yet claimed
    Index("ix_webhook_dlq_owner_created", "owner_id", "created_at"),
    Index(
        "ix_webhook_dlq_requeued", "requeued_at", postgresql_where=text("requeued_at IS NOT NULL")
    ),
    Index("uq_webhook_dlq_webhook_event", "webhook_id", "event_id", unique=True),
)

# ACL entries (revision 0005): one RCRT action on one record for a grantee tenant, or one
# agent of it (``grantee_agent_id`` NULL: every agent of that tenant).
breadcrumb_acl = Table(
    "breadcrumb_acl",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column(
        "breadcrumb_id",
        UUID(as_uuid=True),
        ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("grantee_owner_id", UUID(as_uuid=True), nullable=False),
    Column("grantee_agent_id", Text),
    Column("action", Text, nullable=False),
    _timestamp("created_at"),
    Column("created_by", Text),
    Index("ix_breadcrumb_acl_grantee", "grantee_owner_id", "breadcrumb_id"),
)

# Envelope-encrypted secrets: the value under a per-secret data key (AES-256-GCM), the data
# key wrapped by the key-encryption key named by ``kek_id``.
secrets = Table(
    "secrets",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("scope_type", Text, nullable=False, server_default="global"),
    Column("scope_id", Text),
    Column("description", Text),
    Column("readers", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("ciphertext", LargeBinary, nullable=False),
    Column("nonce", LargeBinary, nullable=False),
    Column("wrapped_key", LargeBinary, nullable=False),
    Column("key_nonce", LargeBinary, nullable=False),
    Column("kek_id", Text, nullable=False),
    _timestamp("created_at"),
    _timestamp("updated_at"),
    Column("created_by", Text),
    Column("updated_by", Text),
)

# Append-only for the application role; no foreign key, so the trail outlives the secret.
secret_audit = Table(
    "secret_audit",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("secret_id", UUID(as_uuid=True), nullable=False),
    Column("action", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("reason", Text),
    _timestamp("created_at"),
    Index("ix_secret_audit_secret", "owner_id", "secret_id", "id"),
)
