"""Domain labels on records (``context.domains.v1``).

- ``breadcrumbs.domains``: the record's domain labels, set at write time from the tenant's
  current definition and GIN-indexed for ``&&`` / ``@>`` filters.
- ``breadcrumbs.domains_version``: the checksum of the definition the labels were computed
  with (NULL: never labelled, or the tenant has no definition). The background relabel
  (``cairn.context.relabel``) walks the records whose version differs from the current one,
  so it resumes wherever it stopped.
- ``domain_centroids``: the unit centroid of each domain's example embeddings per definition
  version, stored by the API (which runs the encoder) for the worker (which does not).
  Tenant-isolated like the other tables.
- The definition-change trigger of revision 0011 also counts ``context.domains.v1`` writes,
  so every process learns of a new definition (schema names: ``cairn.context.domains``).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, UUID

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
EMBEDDING_DIM = 384
BEFORE = ("agent.def.v1", "context.blacklist.v1", "schema.def.v1")
DEFINITION_SCHEMAS = (*BEFORE, "context.domains.v1")


def _definition_triggers(names: Sequence[str]) -> None:
    op.execute("DROP TRIGGER IF EXISTS definitions_deleted ON breadcrumbs")
    op.execute("DROP TRIGGER IF EXISTS definitions_written ON breadcrumbs")
    schemas = ", ".join(f"'{name}'" for name in names)
    op.execute(
        "CREATE TRIGGER definitions_written AFTER INSERT OR UPDATE ON breadcrumbs FOR EACH ROW"
        f" WHEN (NEW.schema_name IN ({schemas}))"
        " EXECUTE FUNCTION cairn_definitions_changed()"
    )
    op.execute(
        "CREATE TRIGGER definitions_deleted AFTER DELETE ON breadcrumbs FOR EACH ROW"
        f" WHEN (OLD.schema_name IN ({schemas}))"
        " EXECUTE FUNCTION cairn_definitions_changed()"
    )


def upgrade() -> None:
    op.add_column(
        "breadcrumbs",
        sa.Column("domains", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
    )
    op.add_column("breadcrumbs", sa.Column("domains_version", sa.Text))
    op.create_index("ix_breadcrumbs_domains", "breadcrumbs", ["domains"], postgresql_using="gin")
    # Labelled records per tenant: clearing a tenant whose definition went is an index scan,
    # and a tenant that never defined domains has no entry at all.
    op.create_index(
        "ix_breadcrumbs_labelled",
        "breadcrumbs",
        ["owner_id"],
        postgresql_where=sa.text("domains_version IS NOT NULL"),
    )
    op.create_table(
        "domain_centroids",
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("version", sa.Text, primary_key=True),
        sa.Column("domain", sa.Text, primary_key=True),
        sa.Column("centroid", Vector(EMBEDDING_DIM), nullable=False),
    )
    op.execute("ALTER TABLE domain_centroids ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE domain_centroids FORCE ROW LEVEL SECURITY")
    op.execute(
        "CREATE POLICY tenant_isolation ON domain_centroids FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )
    _definition_triggers(DEFINITION_SCHEMAS)


def downgrade() -> None:
    _definition_triggers(BEFORE)
    op.drop_table("domain_centroids")
    op.drop_index("ix_breadcrumbs_labelled", table_name="breadcrumbs")
    op.drop_index("ix_breadcrumbs_domains", table_name="breadcrumbs")
    op.drop_column("breadcrumbs", "domains_version")
    op.drop_column("breadcrumbs", "domains")
