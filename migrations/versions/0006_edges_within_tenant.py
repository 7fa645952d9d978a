"""Edges never cross tenants, in the database too: an edge row may only be written when both
of its records belong to the edge's tenant.

Row-level security already confines an edge's ``owner_id`` to the transaction's tenant; but
a tenant may *read* records another tenant granted it (ACL), so a query that forgot its
owner predicate could find such a record and link to it. The write check closes that: both
endpoints must be the tenant's own records.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
OWN = "SELECT 1 FROM breadcrumbs b WHERE b.id = {column} AND b.owner_id = " + TENANT


def upgrade() -> None:
    op.execute("DROP POLICY tenant_isolation ON breadcrumb_edges")
    op.execute(
        "CREATE POLICY tenant_isolation ON breadcrumb_edges FOR ALL"
        f" USING (owner_id = {TENANT})"
        f" WITH CHECK (owner_id = {TENANT}"
        f" AND EXISTS ({OWN.format(column='from_id')})"
        f" AND EXISTS ({OWN.format(column='to_id')}))"
    )


def downgrade() -> None:
    op.execute("DROP POLICY tenant_isolation ON breadcrumb_edges")
    op.execute(
        "CREATE POLICY tenant_isolation ON breadcrumb_edges FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )
