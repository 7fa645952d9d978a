"""Index edges in the order the graph walk takes them: (end, type, weight descending).

Each hop of the graph stage asks, for every frontier record, for its strongest edges in
each direction (causal before temporal before tag before semantic, then by weight; the
fan-out cap). On the primary key and ``ix_edges_to`` PostgreSQL read every edge of a busy
record and sorted them; with these indexes it reads the first ``fanout`` entries and stops,
from the index alone (``INCLUDE`` carries the other end and the owner the row-level
security policy checks). ``ix_edges_to_ranked`` replaces ``ix_edges_to``: same leading
column, so the foreign-key cascade on ``to_id`` still has its index.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_edges_from_ranked ON breadcrumb_edges"
        " (from_id, edge_type, weight DESC) INCLUDE (to_id, owner_id)"
    )
    op.execute(
        "CREATE INDEX ix_edges_to_ranked ON breadcrumb_edges"
        " (to_id, edge_type, weight DESC) INCLUDE (from_id, owner_id)"
    )
    op.drop_index("ix_edges_to", table_name="breadcrumb_edges")


def downgrade() -> None:
    op.create_index("ix_edges_to", "breadcrumb_edges", ["to_id", "edge_type"])
    op.drop_index("ix_edges_to_ranked", table_name="breadcrumb_edges")
    op.drop_index("ix_edges_from_ranked", table_name="breadcrumb_edges")
