"""Events a consumer gave up on, and a per-tenant counter of definition changes.

- ``event_dead_letters``: a breadcrumb event that a JetStream consumer (the worker, webhook
  delivery) could not handle within its delivery limit is recorded here instead of being
  dropped; one row per (consumer, stream sequence), so a redelivered give-up is recorded once.
- ``definition_generations``: bumped by a trigger on every insert, update or delete of an
  agent definition, blacklist or schema definition. Each worker caches agents, the blacklist
  and schema hints; JetStream hands each event to one worker only, so the others learn of a
  change from this counter (read with every event), not from the event itself. A trigger
  rather than application code, so that no write path can forget it.

Both tables are tenant-isolated like the others (``FORCE ROW LEVEL SECURITY``). The schema
names in the trigger are those of ``cairn.context.agents``, ``cairn.context.blacklist`` and
``cairn.transforms.definitions``; a test checks that they agree.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
DEFINITION_SCHEMAS = ("agent.def.v1", "context.blacklist.v1", "schema.def.v1")


def _isolate(table: str) -> None:
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )


def upgrade() -> None:
    op.create_table(
        "event_dead_letters",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("consumer", sa.Text, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("stream_sequence", sa.BigInteger, nullable=False),
        sa.Column("event_id", sa.Text),
        sa.Column("event_type", sa.Text),
        sa.Column("breadcrumb_id", UUID(as_uuid=True)),
        sa.Column("deliveries", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
    )
    op.create_index(
        "uq_event_dead_letters_message",
        "event_dead_letters",
        ["consumer", "stream_sequence"],
        unique=True,
    )
    op.create_index(
        "ix_event_dead_letters_owner_created", "event_dead_letters", ["owner_id", "created_at"]
    )
    op.create_table(
        "definition_generations",
        sa.Column(
            "owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), primary_key=True
        ),
        sa.Column("generation", sa.BigInteger, nullable=False),
    )
    for table in ("event_dead_letters", "definition_generations"):
        _isolate(table)
    op.execute(
        "CREATE FUNCTION cairn_definitions_changed() RETURNS trigger LANGUAGE plpgsql AS $$"
        " DECLARE owner uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.owner_id"
        " ELSE NEW.owner_id END;"
        " BEGIN"
        " INSERT INTO definition_generations AS g (owner_id, generation) VALUES (owner, 1)"
        " ON CONFLICT (owner_id) DO UPDATE SET generation = g.generation + 1;"
        " RETURN NULL;"
        " END $$"
    )
    schemas = ", ".join(f"'{name}'" for name in DEFINITION_SCHEMAS)
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


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS definitions_deleted ON breadcrumbs")
    op.execute("DROP TRIGGER IF EXISTS definitions_written ON breadcrumbs")
    op.execute("DROP FUNCTION IF EXISTS cairn_definitions_changed()")
    op.drop_table("definition_generations")
    op.drop_table("event_dead_letters")
