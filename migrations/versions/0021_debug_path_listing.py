"""Debug paths: an index for ``GET /paths`` (a tenant's paths, the latest started first).

Breadcrumbs have no index by schema, so without this one listing a tenant's paths reads
every record of the tenant; with it, the newest paths are the index's first entries.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_debug_paths_started ON breadcrumbs (owner_id, created_at DESC, id)"
        " WHERE schema_name = 'debug.path.v1'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_debug_paths_started")
