"""Initial schema: tenants, breadcrumbs, history, edges, outbox, idempotency keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _now(name: str, *, nullable: bool = False) -> sa.Column:  # type: ignore[type-arg]
    default = None if nullable else sa.text("now()")
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable, server_default=default)


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "tenants",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        _now("created_at"),
    )
    op.create_table(
        "breadcrumbs",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("schema_name", sa.Text),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("description", sa.Text),
        sa.Column("semantic_version", sa.Text),
        sa.Column("tags", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("context", JSONB, nullable=False),
        sa.Column("llm_hints", JSONB),
        sa.Column("visibility", sa.Text, nullable=False, server_default="team"),
        sa.Column("sensitivity", sa.Text, nullable=False, server_default="low"),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("checksum", sa.Text, nullable=False),
        sa.Column("size_bytes", sa.Integer, nullable=False),
        sa.Column("ttl", sa.DateTime(timezone=True)),
        _now("created_at"),
        _now("updated_at"),
        sa.Column("created_by", sa.Text),
        sa.Column("updated_by", sa.Text),
        sa.Column("llm_text", sa.Text),
        sa.Column("embedding", Vector(384)),
        sa.Column("entity_keywords", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
        sa.CheckConstraint("visibility IN ('public', 'team', 'private')", name="ck_visibility"),
        sa.CheckConstraint("sensitivity IN ('low', 'pii', 'secret')", name="ck_sensitivity"),
    )
    op.create_index("ix_breadcrumbs_tags", "breadcrumbs", ["tags"], postgresql_using="gin")
    op.create_index(
        "ix_breadcrumbs_entity_keywords", "breadcrumbs", ["entity_keywords"], postgresql_using="gin"
    )
    op.execute(
        "CREATE INDEX ix_breadcrumbs_owner_schema_updated"
        " ON breadcrumbs (owner_id, schema_name, updated_at DESC)"
    )
    op.execute(
        "CREATE INDEX ix_breadcrumbs_owner_updated ON breadcrumbs (owner_id, updated_at DESC, id DESC)"
    )
    op.execute(
        "CREATE INDEX ix_breadcrumbs_embedding_hnsw ON breadcrumbs"
        " USING hnsw (embedding vector_cosine_ops)"
    )
    op.execute("CREATE INDEX ix_breadcrumbs_ttl ON breadcrumbs (ttl) WHERE ttl IS NOT NULL")
    op.execute(
        "CREATE INDEX ix_breadcrumbs_unembedded ON breadcrumbs (updated_at)"
        " WHERE embedding IS NULL AND llm_text IS NOT NULL"
    )
    op.create_table(
        "breadcrumb_history",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column(
            "breadcrumb_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("tags", ARRAY(sa.Text), nullable=False),
        sa.Column("context", JSONB, nullable=False),
        sa.Column("checksum", sa.Text, nullable=False),
        sa.Column("change", sa.Text, nullable=False),
        _now("updated_at"),
        sa.Column("updated_by", sa.Text),
        sa.UniqueConstraint("breadcrumb_id", "version", name="uq_history_breadcrumb_version"),
    )
    op.create_table(
        "breadcrumb_edges",
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column(
            "from_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "to_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("edge_type", sa.SmallInteger, nullable=False),
        sa.Column("weight", sa.REAL, nullable=False, server_default="1"),
        _now("created_at"),
        sa.PrimaryKeyConstraint("from_id", "to_id", "edge_type", name="pk_breadcrumb_edges"),
        sa.CheckConstraint("edge_type BETWEEN 0 AND 3", name="ck_edge_type"),
    )
    op.create_index("ix_edges_to", "breadcrumb_edges", ["to_id", "edge_type"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("msg_id", UUID(as_uuid=True), nullable=False, unique=True),
        sa.Column("payload", JSONB, nullable=False),
        _now("created_at"),
        _now("published_at", nullable=True),
    )
    op.execute("CREATE INDEX ix_outbox_pending ON outbox (id) WHERE published_at IS NULL")
    op.create_table(
        "idempotency_keys",
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("breadcrumb_id", UUID(as_uuid=True), nullable=False),
        sa.Column("request_hash", sa.Text, nullable=False),
        sa.Column("response", JSONB, nullable=False),
        _now("created_at"),
        sa.PrimaryKeyConstraint("owner_id", "key", name="pk_idempotency_keys"),
    )


def downgrade() -> None:
    for table in (
        "idempotency_keys",
        "outbox",
        "breadcrumb_edges",
        "breadcrumb_history",
        "breadcrumbs",
        "tenants",
    ):
        op.drop_table(table)
