"""Debug paths: an index of paths by when they were last written, whatever their status.

A record that arrives after later ones of its session were tracked (two workers, a
redelivery) rebuilds the session's paths since then; the worker tells so from the paths
written since the record was created (a path is written after its last waypoint's record).
Under row-level security only plain columns make index conditions (the JSON operators are
not leakproof), so the index is on ``updated_at``: the scan is bounded to the tenant's
recently written paths. Migration 0018's index holds active paths only.

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
        "CREATE INDEX ix_debug_paths_written ON breadcrumbs (owner_id, updated_at)"
        " WHERE schema_name = 'debug.path.v1'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_debug_paths_written")
