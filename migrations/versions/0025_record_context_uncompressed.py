"""A record's context stored without compression.

An assembly replaces its ``agent.context.v1`` record with a ~55 KB context on every
trigger; PostgreSQL compressed each new version with pglz (~0.5 ms of the write's
statement, to ~20 KB) for a row read whole when an agent or a subscriber asks for it,
which then pays the decompression. ``EXTERNAL``: still moved out of line (TOAST) when
large, never compressed. Only contexts over ~2 KB were ever compressed, so ordinary records
are stored as before; a large one takes ~3x the space (one row per record: the history's
copies, up to ``context.history_versions`` per record, stay compressed). Rows already stored
keep their form; only new values are written uncompressed.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE breadcrumbs ALTER COLUMN context SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("ALTER TABLE breadcrumbs ALTER COLUMN context SET STORAGE EXTENDED")
