"""Debug paths: an index of every path of a session, whatever its status.

The worker reads, for every record that says something about a debugging session, the
session's latest path (active or not): a record that arrives after later ones of its
session were tracked (two workers, a redelivery) rebuilds that path, and it can only tell
so from the latest path's last waypoint. Migration 0018's index holds active paths only.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_debug_paths_session ON breadcrumbs (owner_id, (context->>'session'))"
        " WHERE schema_name = 'debug.path.v1'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_debug_paths_session")
