"""The outbox's payload stored without compression.

Every assembly writes one event carrying its ~55 KB context; PostgreSQL compressed it
with pglz (~1.2 ms of the write's statement, to ~19 KB), for a row the relay reads once,
publishes, marks and deletes a little later. ``EXTERNAL``: still moved out of line (TOAST) when large, never
compressed; more WAL per event (~67 KB instead of ~21 KB), less CPU. Rows already stored
keep their form; only new values are written uncompressed.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE outbox ALTER COLUMN payload SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("ALTER TABLE outbox ALTER COLUMN payload SET STORAGE EXTENDED")
