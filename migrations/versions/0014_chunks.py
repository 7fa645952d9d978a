"""Chunk vectors of long records (``breadcrumb_chunks``).

The encoder reads at most 256 word-pieces, so a record's own embedding covers only the
start of a long ``llm_text``. A record whose text is longer also gets one row per
overlapping window of it: the window's character span in ``llm_text``, its text and its
embedding. Searches and the semantic seeds score a record by the best of its own vector
and its chunks'; the context assembly may show a long record's best chunks as a snippet.

- Rows go with their record (``ON DELETE CASCADE``) and are replaced whenever its
  ``llm_text`` changes; short records have none, so the table stays as small as the long
  records make it.
- The embedding is indexed with HNSW (cosine), as ``breadcrumbs.embedding`` is, and kept
  inline (``STORAGE PLAIN``, see revision 0008).
- Tenant-isolated like every other table (``FORCE ROW LEVEL SECURITY``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
EMBEDDING_DIM = 384


def _isolate(table: str) -> None:
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )


def upgrade() -> None:
    op.create_table(
        "breadcrumb_chunks",
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column(
            "breadcrumb_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("ordinal", sa.Integer, primary_key=True),
        sa.Column("char_start", sa.Integer, nullable=False),
        sa.Column("char_end", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("embedding", Vector(EMBEDDING_DIM), nullable=False),
        sa.CheckConstraint("0 <= char_start AND char_start < char_end", name="ck_chunk_span"),
    )
    op.execute("ALTER TABLE breadcrumb_chunks ALTER COLUMN embedding SET STORAGE PLAIN")
    op.execute(
        "CREATE INDEX ix_breadcrumb_chunks_embedding_hnsw ON breadcrumb_chunks"
        " USING hnsw (embedding vector_cosine_ops)"
    )
    op.create_index("ix_breadcrumb_chunks_owner", "breadcrumb_chunks", ["owner_id"])
    _isolate("breadcrumb_chunks")


def downgrade() -> None:
    op.drop_table("breadcrumb_chunks")
