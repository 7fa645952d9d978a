"""Keep lexemes and keyword pointers inline in the row (``STORAGE MAIN``).

The hybrid search of the semantic seeds checks every record of its filtered subset for a
shared keyword (``entity_keywords``) and a shared lexeme (``search_vector``), and ranks the
text matches. With the 1.5 KB vector stored PLAIN (revision 0008) the toaster moved both
columns out of line, so each check fetched them from the TOAST table: ~11 buffer reads a
record, 75 ms for the 6,000 knowledge and note records at 100k. MAIN keeps them in the row
(compressed if need be) and leaves the context and llm_text to be TOASTed instead. Existing
rows are rewritten once: naming ``llm_text`` in the UPDATE recomputes the generated
``search_vector`` (PostgreSQL recomputes only those whose inputs are set), and
``entity_keywords`` takes a new datum through its text form (an unchanged one would keep its
TOAST pointer). Under row-level security this needs a migration role that bypasses it.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE breadcrumbs ALTER COLUMN search_vector SET STORAGE MAIN,"
        " ALTER COLUMN entity_keywords SET STORAGE MAIN"
    )
    # A no-op on a new database; once, a full rewrite on an old one.
    op.execute(
        "UPDATE breadcrumbs SET llm_text = llm_text,"
        " entity_keywords = CAST(CAST(entity_keywords AS text) AS text[])"
        " WHERE entity_keywords IS NOT NULL OR llm_text IS NOT NULL"
    )


def downgrade() -> None:
    op.execute(
        "ALTER TABLE breadcrumbs ALTER COLUMN search_vector SET STORAGE EXTENDED,"
        " ALTER COLUMN entity_keywords SET STORAGE EXTENDED"
    )
