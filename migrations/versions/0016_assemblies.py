"""The assembly log: one row per context assembly, kept for a configurable time.

- ``assemblies``: who an assembly was for (agent, session tag), what triggered it (a stored
  record's id or an on-demand query's text), the trigger's domain where the tenant defines
  domains, how many seeds each source gave, the selected record ids, tokens used against the
  budget, milliseconds per phase (and their total, for percentiles), whether an on-demand
  answer came from the answer cache, and what it was degraded by. Written in the transaction
  that writes the assembled context (the worker, ``POST /contexts/assemble``), or in a
  transaction of its own for ``POST /contexts/query``; purged after
  ``context.assembly_log_retention_days`` by a background task.
- A bigint identity orders the rows as they were written: it is the page cursor of
  ``GET /assemblies`` (newest first) and the per-agent / per-session indexes end with it.

Tenant-isolated like the other tables (``FORCE ROW LEVEL SECURITY``).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"


def _isolate(table: str) -> None:
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} FOR ALL"
        f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
    )


def upgrade() -> None:
    op.create_table(
        "assemblies",
        sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("origin", sa.Text, nullable=False),
        sa.Column("session_tag", sa.Text),
        sa.Column("trigger_id", UUID(as_uuid=True)),
        sa.Column("query_text", sa.Text),
        sa.Column("domain", sa.Text),
        sa.Column("seed_counts", JSONB, nullable=False),
        sa.Column("selected_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column("token_budget", sa.Integer, nullable=False),
        sa.Column("timings_ms", JSONB, nullable=False),
        sa.Column("total_ms", sa.Float, nullable=False),
        sa.Column("cache_hit", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("degraded", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
    )
    op.create_index("ix_assemblies_owner_id", "assemblies", ["owner_id", sa.text("id DESC")])
    op.create_index(
        "ix_assemblies_owner_agent", "assemblies", ["owner_id", "agent_id", sa.text("id DESC")]
    )
    op.create_index(
        "ix_assemblies_owner_session",
        "assemblies",
        ["owner_id", "session_tag", sa.text("id DESC")],
        postgresql_where=sa.text("session_tag IS NOT NULL"),
    )
    # The retention purge (across tenants) and `since` of the stats.
    op.create_index("ix_assemblies_created", "assemblies", ["created_at"])
    _isolate("assemblies")


def downgrade() -> None:
    op.drop_table("assemblies")
