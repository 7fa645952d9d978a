"""Keep embeddings inline in the row (``STORAGE PLAIN``), never TOASTed.

A 384-d vector is 1.5 KB; next to a record's context and llm_text it pushed rows past the
TOAST threshold and was moved out of line, so the exact cosine scan of a filtered subset
read several TOAST pages per row (~10 µs a row: 60 ms for 6,000 knowledge records at
100k). With PLAIN storage the context and llm_text are TOASTed instead. Existing rows are
rewritten once so that their vectors move back in (under row-level security this needs a
migration role that bypasses it, as the embedded and compose superusers do).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE breadcrumbs ALTER COLUMN embedding SET STORAGE PLAIN")
    # A new datum (the text round trip) is stored under the new rule; an unchanged one would
    # keep its TOAST pointer. A no-op on a new database; once, a full rewrite on an old one.
    op.execute(
        "UPDATE breadcrumbs SET embedding = CAST(CAST(embedding AS text) AS vector)"
        " WHERE embedding IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE breadcrumbs ALTER COLUMN embedding SET STORAGE EXTERNAL")
