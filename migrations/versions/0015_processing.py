"""Processing state per record and stage (``record_processing``).

One row per (record, stage) for the stages ``embedded``, ``keyed``, ``chunked``, ``edged``
and ``labelled``: state (``done`` / ``pending`` / ``failed`` / ``not_needed``), attempts,
when it was last done, the last error and when the retry job tries again.

Why a row per stage rather than one wide row per record with five column groups:
- Each stage is written by whoever runs it: the API writes embedded/keyed/labelled (and
  chunked) in the write's transaction, the worker writes ``edged`` in its own. Separate rows
  mean the worker's edge transaction never locks the tuple a concurrent PATCH upserts, and
  neither rewrites the other's columns (a wide row is copied whole on every MVCC update).
- The hot path stays one statement: the write's stages go in one multi-row
  ``INSERT ... ON CONFLICT DO UPDATE`` (a round trip, as a wide row would be).
- Coverage is a plain ``GROUP BY stage, state``; the retry job reads one partial index of
  due rows across stages; a stage added later needs no migration.
The price is a few small tuples per record instead of one (~60 bytes each).

The backfill derives the state from what ``breadcrumbs`` already shows: an embedding
(assembled contexts and records without text: not needed; otherwise pending, due now, so
the retry job embeds it), keyword pointers (none yet: pending), domain labels (a version:
done; a tenant with domains but no version: pending; a tenant without: not needed), edges
(present: done; otherwise pending, the retry job builds them). ``chunked`` (revision 0014):
done where a record has chunks, not needed where its text is too short to need any (fewer
characters than the encoder's window has word-pieces), else pending: the retry job counts
its word-pieces and cuts it. Tenant-isolated like every other table.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
STATES = ("done", "pending", "failed", "not_needed")
WINDOW = 254  # the word-pieces the encoder reads; a word-piece spans one character or more
STAGES = ("embedded", "keyed", "chunked", "edged", "labelled")
CONTEXT_SCHEMA = "agent.context.v1"


def _isolate(table: str) -> None:
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _backfill(stage: str, state_sql: str) -> None:
    op.execute(
        "INSERT INTO record_processing (owner_id, breadcrumb_id, stage, state, attempts,"
        " done_at, next_attempt_at)"
        f" SELECT b.owner_id, b.id, '{stage}', s.state, CASE WHEN s.state = 'done' THEN 1"
        " ELSE 0 END, CASE WHEN s.state = 'done' THEN b.updated_at END,"
        " CASE WHEN s.state = 'pending' THEN now() END"
        f" FROM breadcrumbs b CROSS JOIN LATERAL (SELECT {state_sql} AS state) s"
        " ON CONFLICT DO NOTHING"
    )


def upgrade() -> None:
    op.create_table(
        "record_processing",
        # No key to tenants: the record's key implies its tenant, one lookup less per row.
        sa.Column("owner_id", UUID(as_uuid=True), primary_key=True),
        sa.Column(
            "breadcrumb_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("stage", sa.Text, primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("done_at", sa.DateTime(timezone=True)),
        sa.Column("last_error", sa.Text),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True)),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint(f"state IN ({_quoted(STATES)})", name="ck_record_processing_state"),
        sa.CheckConstraint(f"stage IN ({_quoted(STAGES)})", name="ck_record_processing_stage"),
    )
    # The retry job's queue: only rows with a next attempt are in it.
    op.create_index(
        "ix_record_processing_due",
        "record_processing",
        ["next_attempt_at"],
        postgresql_where=sa.text("next_attempt_at IS NOT NULL"),
    )
    _isolate("record_processing")
    context = f"b.schema_name = '{CONTEXT_SCHEMA}'"
    _backfill(
        "embedded",
        f"CASE WHEN {context} OR b.llm_text IS NULL THEN 'not_needed'"
        " WHEN b.embedding IS NOT NULL THEN 'done' ELSE 'pending' END",
    )
    _backfill(
        "chunked",
        f"CASE WHEN {context} OR b.llm_text IS NULL OR char_length(b.llm_text) <= {WINDOW}"
        " THEN 'not_needed'"
        " WHEN EXISTS (SELECT 1 FROM breadcrumb_chunks c WHERE c.breadcrumb_id = b.id)"
        " THEN 'done' ELSE 'pending' END",
    )
    _backfill("keyed", "CASE WHEN cardinality(b.entity_keywords) > 0 THEN 'done' ELSE 'pending' END")
    _backfill(
        "labelled",
        f"CASE WHEN {context} THEN 'not_needed' WHEN b.domains_version IS NOT NULL THEN 'done'"
        " WHEN EXISTS (SELECT 1 FROM domain_centroids c WHERE c.owner_id = b.owner_id)"
        " THEN 'pending' ELSE 'not_needed' END",
    )
    _backfill(
        "edged",
        f"CASE WHEN {context} THEN 'not_needed'"
        " WHEN EXISTS (SELECT 1 FROM breadcrumb_edges e WHERE e.from_id = b.id)"
        " OR EXISTS (SELECT 1 FROM breadcrumb_edges e WHERE e.to_id = b.id)"
        " THEN 'done' ELSE 'pending' END",
    )


def downgrade() -> None:
    op.drop_table("record_processing")
