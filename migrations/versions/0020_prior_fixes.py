"""Prior fixes: the index the ``paths`` seed source scans.

For a trigger that reports an error, the source (cairn.context.sources.paths) reads the
tenant's resolved paths, newest first, for the same error signature and for the words of
their error lines: a scan of this partial index, not of the tenant's records. (Under
row-level security an index on ``context->>'signature'`` would not be used: the operator is
not leakproof.) No new table and no extension (the embedded PostgreSQL has no contrib
modules).

Revision ID: 0020
Revises: 0018
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_debug_paths_resolved": "(owner_id, updated_at DESC)"
    " WHERE schema_name = 'debug.path.v1' AND context->>'status' = 'resolved'",
}


def upgrade() -> None:
    for name, definition in INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON breadcrumbs {definition}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
