"""Reindex jobs: recompute records' derived fields, resumably.

- ``reindex_jobs``: one row per job and tenant — its filters (``schema_name``, ``since``:
  records updated at or after), where it came from (``cli``: ``cairn reindex``; ``hints``: a
  schema definition's hints changed), its state, its cursor (the id of the last record done:
  records are walked in id order) and counts, committed together with each batch of records,
  so a job resumes at the next record after a crash. ``lease_owner`` / ``lease_expires_at``
  let one runner at a time work on a job; one that stops renewing its lease is taken over.
- At most one pending ``hints`` job per (tenant, schema): a second hint change before the
  job started needs no second job.

Tenant-isolated like the other tables; the runners look across tenants on the schema
owner's connection.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision: str = "0017"
down_revision: str | None = "0016"
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


def _timestamp(name: str, *, nullable: bool = True) -> sa.Column[object]:
    default = None if nullable else sa.func.now()
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable, server_default=default)


def _count(name: str) -> sa.Column[object]:
    return sa.Column(name, sa.Integer, nullable=False, server_default="0")


def upgrade() -> None:
    op.create_table(
        "reindex_jobs",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("schema_name", sa.Text),
        sa.Column("since", sa.DateTime(timezone=True)),
        sa.Column("origin", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False, server_default="pending"),
        sa.Column("cursor", UUID(as_uuid=True)),
        _count("total"),
        _count("done"),
        _count("changed"),
        _count("embedded"),
        _count("edges"),
        _count("failed"),
        sa.Column("failures", JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("lease_owner", sa.Text),
        _timestamp("lease_expires_at"),
        _timestamp("heartbeat_at"),
        _timestamp("created_at", nullable=False),
        _timestamp("started_at"),
        _timestamp("updated_at", nullable=False),
        _timestamp("finished_at"),
        sa.CheckConstraint("origin IN ('cli', 'hints')", name="ck_reindex_jobs_origin"),
        sa.CheckConstraint(
            "state IN ('pending', 'running', 'done')", name="ck_reindex_jobs_state"
        ),
    )
    op.create_index(
        "ix_reindex_jobs_unfinished",
        "reindex_jobs",
        ["origin", "created_at"],
        postgresql_where=sa.text("state <> 'done'"),
    )
    op.create_index(
        "uq_reindex_jobs_pending_hints",
        "reindex_jobs",
        ["owner_id", "schema_name"],
        unique=True,
        postgresql_where=sa.text("state = 'pending' AND origin = 'hints'"),
    )
    op.create_index("ix_reindex_jobs_owner_created", "reindex_jobs", ["owner_id", "created_at"])
    _isolate("reindex_jobs")


def downgrade() -> None:
    op.drop_table("reindex_jobs")
