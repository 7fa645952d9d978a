"""Tenant isolation in the database: the application role, row-level security, ACLs, secrets.

- ``cairn_current_tenant()``: the transaction's tenant, from ``SET LOCAL cairn.tenant``
  (``set_config('cairn.tenant', …, true)``); NULL when unset or empty, so a query that
  forgot its tenant matches no row (``owner_id = NULL`` is never true).
- The application role (the user of ``DATABASE_URL`` when ``CAIRN_ADMIN_DATABASE_URL`` is
  set, see ``cairn.db.roles.provision``): LOGIN, NOSUPERUSER, NOBYPASSRLS, no
  CREATEDB/CREATEROLE; DML on every table (default privileges cover tables later revisions
  create), never on ``alembic_version``; ``secret_audit`` is append-only.
- Every tenant table: ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` and a policy
  ``owner_id = cairn_current_tenant()`` for every command (``tenants``: its ``id``).
  Two more permissive policies make ACL grants work without SECURITY DEFINER code: a grantee
  tenant may *read* the ACL rows naming it, and the breadcrumbs they grant ``read_context`` /
  ``read_full`` on. Grants never let another tenant write: cross-tenant writes are refused
  by the ``FOR ALL`` policy whatever the application does.
- ``breadcrumb_acl`` (RCRT's actions per record and grantee), ``secrets`` (envelope
  encrypted) and ``secret_audit`` (no foreign key: the trail outlives the secret).

The schema owner (superuser in the embedded and compose setups) is exempt and serves
migrations and the jobs that span tenants (see ``cairn.db.engine``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import context, op
from sqlalchemy.dialects.postgresql import UUID

if TYPE_CHECKING:
    from cairn.db.roles import AppRole

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT = "cairn_current_tenant()"
OWNED_TABLES = (
    "breadcrumbs",
    "breadcrumb_history",
    "breadcrumb_edges",
    "outbox",
    "idempotency_keys",
    "agent_secrets",
    "webhooks",
    "webhook_dlq",
    "agents",
    "breadcrumb_acl",
    "secrets",
    "secret_audit",
)
ACL_ACTIONS = ("read_context", "read_full", "update", "delete", "subscribe")


def _app_role() -> "AppRole | None":  # noqa: UP037
    from cairn.config import get_settings
    from cairn.db.roles import AppRole, app_role

    role = context.config.attributes.get("app_role")
    return role if isinstance(role, AppRole) else app_role(get_settings())


def _now(name: str) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        name, sa.DateTime(timezone=True), nullable=False, server_default=sa.text("now()")
    )


def _create_tables() -> None:
    actions = ", ".join(f"'{action}'" for action in ACL_ACTIONS)
    op.create_table(
        "breadcrumb_acl",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column(
            "breadcrumb_id",
            UUID(as_uuid=True),
            sa.ForeignKey("breadcrumbs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("grantee_owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("grantee_agent_id", sa.Text),  # NULL: every agent of the grantee tenant
        sa.Column("action", sa.Text, nullable=False),
        _now("created_at"),
        sa.Column("created_by", sa.Text),
        sa.CheckConstraint(f"action IN ({actions})", name="ck_breadcrumb_acl_action"),
    )
    op.execute(
        "CREATE UNIQUE INDEX uq_breadcrumb_acl_grant ON breadcrumb_acl"
        " (breadcrumb_id, grantee_owner_id, grantee_agent_id, action) NULLS NOT DISTINCT"
    )
    op.create_index(
        "ix_breadcrumb_acl_grantee", "breadcrumb_acl", ["grantee_owner_id", "breadcrumb_id"]
    )
    op.create_table(
        "secrets",
        sa.Column("id", UUID(as_uuid=True), primary_key=True),
        sa.Column("owner_id", UUID(as_uuid=True), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("scope_type", sa.Text, nullable=False, server_default="global"),
        sa.Column("scope_id", sa.Text),
        sa.Column("description", sa.Text),
        sa.Column("readers", sa.ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("ciphertext", sa.LargeBinary, nullable=False),
        sa.Column("nonce", sa.LargeBinary, nullable=False),
        sa.Column("wrapped_key", sa.LargeBinary, nullable=False),
        sa.Column("key_nonce", sa.LargeBinary, nullable=False),
        sa.Column("kek_id", sa.Text, nullable=False),
        _now("created_at"),
        _now("updated_at"),
        sa.Column("created_by", sa.Text),
        sa.Column("updated_by", sa.Text),
        sa.CheckConstraint(
            "scope_type IN ('global', 'workspace', 'agent')", name="ck_secrets_scope_type"
        ),
    )
    op.execute(
        "CREATE UNIQUE INDEX uq_secrets_name ON secrets"
        " (owner_id, scope_type, scope_id, name) NULLS NOT DISTINCT"
    )
    op.create_table(
        "secret_audit",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("owner_id", UUID(as_uuid=True), nullable=False),
        sa.Column("secret_id", UUID(as_uuid=True), nullable=False),  # no FK: outlives it
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("reason", sa.Text),
        _now("created_at"),
    )
    op.create_index("ix_secret_audit_secret", "secret_audit", ["owner_id", "secret_id", "id"])


def _policies() -> None:
    op.execute(
        "CREATE FUNCTION cairn_current_tenant() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE"
        " AS $$ SELECT NULLIF(current_setting('cairn.tenant', true), '')::uuid $$"
    )
    for table in OWNED_TABLES:
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON {table} FOR ALL"
            f" USING (owner_id = {TENANT}) WITH CHECK (owner_id = {TENANT})"
        )
    op.execute("ALTER TABLE tenants ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE tenants FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON tenants FOR ALL"
        f" USING (id = {TENANT}) WITH CHECK (id = {TENANT})"
    )
    # A grantee sees the grants naming its tenant, and the records granted to it for reading.
    op.execute(
        "CREATE POLICY acl_grantee ON breadcrumb_acl FOR SELECT"
        f" USING (grantee_owner_id = {TENANT})"
    )
    op.execute(
        "CREATE POLICY acl_read ON breadcrumbs FOR SELECT USING (id IN ("
        "SELECT a.breadcrumb_id FROM breadcrumb_acl a"
        f" WHERE a.grantee_owner_id = {TENANT} AND a.action IN ('read_context', 'read_full')))"
    )


def upgrade() -> None:
    from cairn.db.roles import provision

    _create_tables()
    _policies()
    role = _app_role()
    if role is not None:  # also done after every migrate (cairn.db.migrate): idempotent
        provision(op.get_bind(), role)


def downgrade() -> None:
    role = _app_role()
    op.execute("DROP POLICY IF EXISTS acl_read ON breadcrumbs")
    op.execute("DROP POLICY IF EXISTS tenant_isolation ON tenants")
    op.execute("ALTER TABLE tenants NO FORCE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE tenants DISABLE ROW LEVEL SECURITY")
    for table in OWNED_TABLES[:9]:
        op.execute(f"DROP POLICY IF EXISTS tenant_isolation ON {table}")
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    op.drop_table("secret_audit")
    op.drop_table("secrets")
    op.drop_table("breadcrumb_acl")
    op.execute("DROP FUNCTION cairn_current_tenant()")
    bind = op.get_bind()
    if role is not None and bind.execute(sa.text("SELECT current_user")).scalar() != role.name:
        # Privileges in this database only; the role itself may serve other databases.
        query = sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n")
        if bind.execute(query, {"n": role.name}).scalar():
            op.execute(f'DROP OWNED BY "{role.name}"')
