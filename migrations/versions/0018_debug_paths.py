"""Debug paths: indexes for the worker's per-record path queries.

Paths and waypoints are breadcrumbs (``debug.path.v1``, ``debug.waypoint.v1``); the worker
looks up, for every record that says something about a debugging session, the session's
active path and whether the record already has a waypoint (a redelivered event), and on
resolution a path's waypoints in order. Partial expression indexes keep each of those a
probe rather than a scan of the tenant's waypoints. No new table.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_debug_paths_active": "(owner_id, (context->>'session'))"
    " WHERE schema_name = 'debug.path.v1' AND context->>'status' = 'active'",
    "ix_debug_waypoints_source": "(owner_id, (context->>'source_record_id'))"
    " WHERE schema_name = 'debug.waypoint.v1'",
    "ix_debug_waypoints_path": "(owner_id, (context->>'path_id'), ((context->>'sequence')::int))"
    " WHERE schema_name = 'debug.waypoint.v1'",
}


def upgrade() -> None:
    for name, definition in INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON breadcrumbs {definition}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
