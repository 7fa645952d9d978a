"""Operating state: processing per record and stage, reindex jobs, the assembly log."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from cairn.db.models.base import metadata, timestamp

# Processing state per record and stage (revision 0015; cairn.processing): one row per
# (record, stage), written by whoever runs the stage; rows with a next attempt are the
# retry job's queue.
record_processing = Table(
    "record_processing",
    metadata,
    Column("owner_id", UUID(as_uuid=True), primary_key=True),
    Column(
        "breadcrumb_id",
        UUID(as_uuid=True),
        ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("stage", Text, primary_key=True),
    Column("state", Text, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    timestamp("done_at", nullable=True),
    Column("last_error", Text),
    timestamp("next_attempt_at", nullable=True),
    timestamp("updated_at"),
    Index(
        "ix_record_processing_due",
        "next_attempt_at",
        postgresql_where=text("next_attempt_at IS NOT NULL"),
    ),
)

# Reindex jobs (revision 0017): filters, a cursor in id order and counts, committed with
# each batch of records; the lease lets one runner at a time work on a job.
reindex_jobs = Table(
    "reindex_jobs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("schema_name", Text),
    Column("since", DateTime(timezone=True)),
    Column("origin", Text, nullable=False),
    Column("state", Text, nullable=False, server_default="pending"),
    Column("cursor", UUID(as_uuid=True)),
    *(
        Column(name, Integer, nullable=False, server_default="0")
        for name in ("total", "done", "changed", "embedded", "edges", "failed")
    ),
    Column("failures", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    Column("lease_owner", Text),
    timestamp("lease_expires_at", nullable=True),
    timestamp("heartbeat_at", nullable=True),
    timestamp("created_at"),
    timestamp("started_at", nullable=True),
    timestamp("updated_at"),
    timestamp("finished_at", nullable=True),
)

# One row per context assembly (revision 0016): the identity orders the rows as written and
# is the cursor of GET /assemblies; rows older than the retention are purged.
assemblies = Table(
    "assemblies",
    metadata,
    Column("id", BigInteger, Identity(always=True), primary_key=True),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("tenants.id"), nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("origin", Text, nullable=False),
    Column("session_tag", Text),
    Column("trigger_id", UUID(as_uuid=True)),
    Column("query_text", Text),
    Column("domain", Text),
    Column("seed_counts", JSONB, nullable=False),
    Column("selected_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
    Column("token_count", Integer, nullable=False),
    Column("token_budget", Integer, nullable=False),
    Column("timings_ms", JSONB, nullable=False),
    Column("total_ms", Float, nullable=False),
    Column("cache_hit", Boolean, nullable=False, server_default=text("false")),
    Column("degraded", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    timestamp("created_at"),
    Index("ix_assemblies_owner_id", "owner_id", text("id DESC")),
    Index("ix_assemblies_owner_agent", "owner_id", "agent_id", text("id DESC")),
    Index(
        "ix_assemblies_owner_session",
        "owner_id",
        "session_tag",
        text("id DESC"),
        postgresql_where=text("session_tag IS NOT NULL"),
    ),
    Index("ix_assemblies_created", "created_at"),
)
