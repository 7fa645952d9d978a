"""Domain labels on records (``context.domains.v1``).

- ``breadcrumbs.domains``: the record's domain labels, set at write time from the tenant's
  current definition and GIN-indexed for ``&&`` / ``@>`` filters.
- ``breadcrumbs.domains_version``: the checksum of the definition the labels were computed
  with (NULL: never labelled, or the tenant has no definition). The background relabel
  (``cairn.context.relabel``) walks the records whose version differs from the current one,
  so it resumes wherever it stopped.
- The definition-change trigger of revision 0011 also counts ``context.domains.v1`` writes,
  so every process learns of a new definition (schema names: ``cairn.context.domains``).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

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
    _definition_triggers(DEFINITION_SCHEMAS)


def downgrade() -> None:
    _definition_triggers(BEFORE)
    op.drop_index("ix_breadcrumbs_domains", table_name="breadcrumbs")
    op.drop_column("breadcrumbs", "domains_version")
    op.drop_column("breadcrumbs", "domains")
