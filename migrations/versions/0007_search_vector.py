"""Stored full-text vectors for the lexical half of the hybrid search.

``search_vector`` is ``to_tsvector('english', llm_text)``, generated and stored, so the
BM25 scoring of the context builder's semantic seeds reads lexemes instead of parsing
every candidate's text on every assembly; the GIN index serves lexical matches.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE breadcrumbs ADD COLUMN search_vector tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english'::regconfig, coalesce(llm_text, '')))"
        " STORED"
    )
    op.execute(
        "CREATE INDEX ix_breadcrumbs_search_vector ON breadcrumbs USING gin (search_vector)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_breadcrumbs_search_vector")
    op.execute("ALTER TABLE breadcrumbs DROP COLUMN search_vector")
