"""Stored blocks: each record's rendered block and its token count, at its current version.

An assembly spends most of its CPU on records its worker has not seen before: rendering
each one's block (hints, header, title check) and counting its tokens. The worker renders
a record's block once when the record is written (its edge step) and keeps it here; an
assembly reads the blocks it lacks in one query instead of rendering them.

One row per record: the version and a digest of everything else that decides the block
(the block format, the token encoding and the hints that render it) are part of the row,
and a reader that finds another version or digest treats it as a miss, so a stale block is
never served. A newer version overwrites the row; a record's delete cascades to it.

``line_tokens`` is the count of the block's line in a run of one-line items of its schema
(context.render.run_line), NULL when it has none.

Tenant-isolated like the others.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"


def upgrade() -> None:
    op.execute(
        "CREATE TABLE record_blocks ("
        " record_id uuid PRIMARY KEY REFERENCES breadcrumbs (id) ON DELETE CASCADE,"
        " owner_id uuid NOT NULL,"
        " version integer NOT NULL,"
        " digest bytea NOT NULL,"
        " block text NOT NULL,"
        " tokens integer NOT NULL,"
        " line_tokens integer)"
    )
    op.execute("ALTER TABLE record_blocks ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE record_blocks FORCE ROW LEVEL SECURITY")
    op.execute(
        "CREATE POLICY tenant_isolation ON record_blocks FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )


def downgrade() -> None:
    op.drop_table("record_blocks")
