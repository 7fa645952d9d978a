"""Agents, their signing secrets, and envelope-encrypted secrets with their audit trail."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    LargeBinary,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from cairn.db.models.base import metadata, timestamp

agents = Table(
    "agents",
    metadata,
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("roles", ARRAY(Text), nullable=False),
    timestamp("created_at"),
    timestamp("updated_at"),
    PrimaryKeyConstraint("owner_id", "agent_id", name="pk_agents"),
)

agent_secrets = Table(
    "agent_secrets",
    metadata,
    Column("owner_id", UUID(as_uuid=True), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("secret", Text, nullable=False),
    timestamp("updated_at"),
    PrimaryKeyConstraint("owner_id", "agent_id", name="pk_agent_secrets"),
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
    timestamp("created_at"),
    timestamp("updated_at"),
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
    timestamp("created_at"),
    Index("ix_secret_audit_secret", "owner_id", "secret_id", "id"),
)
