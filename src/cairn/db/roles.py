"""The application's database role: who ``DATABASE_URL`` logs in as.

With ``CAIRN_ADMIN_DATABASE_URL`` set (two URLs: the owner migrates, the application role
serves), the application role is the user of ``DATABASE_URL`` and its password is taken
from there, so an operator writes each credential once; every ``cairn migrate`` (and every
start that migrates) creates or updates it, so a changed password applies on the next run.
With a single URL nothing is created: one role does everything, and row-level security
only binds it if it is neither a superuser nor ``BYPASSRLS`` (``cairn serve`` warns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url

from cairn.config import Settings

DEFAULT_APP_ROLE = "cairn_app"
_ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True, slots=True)
class AppRole:
    name: str
    password: str | None = None

    def __post_init__(self) -> None:
        if not _ROLE_NAME.fullmatch(self.name):
            raise ValueError(f"application role {self.name!r}: use lowercase a-z, 0-9 and _")


def app_role(settings: Settings) -> AppRole | None:
    if settings.admin_database_url and settings.database_url:
        app = make_url(settings.database_url)
        admin = make_url(settings.admin_database_url)
        if app.username and app.username != admin.username:
            return AppRole(app.username, app.password)
    return None


def provision(connection: Connection, role: AppRole) -> bool:
    """Create or tighten the application role and grant it what the application needs, as
    the schema owner (idempotent). False when it is the connected role itself: never demote
    ourselves."""
    if connection.execute(text("SELECT current_user")).scalar() == role.name:
        return False
    quoted = f'"{role.name}"'  # validated: [a-z_][a-z0-9_]*
    # Roles are per cluster: several databases may race to create it.
    connection.exec_driver_sql(
        f"DO $$ BEGIN CREATE ROLE {quoted} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    # %L renders a NULL password as NULL: "PASSWORD NULL" (the embedded server trusts).
    alter = connection.execute(
        text(
            "SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB"
            " NOCREATEROLE NOREPLICATION PASSWORD %L', CAST(:name AS text), CAST(:pw AS text))"
        ),
        {"name": role.name, "pw": role.password},
    ).scalar()
    connection.exec_driver_sql(str(alter))
    database = connection.execute(text("SELECT current_database()")).scalar()
    for statement in (
        f'GRANT CONNECT ON DATABASE "{database}" TO {quoted}',
        f"GRANT USAGE ON SCHEMA public TO {quoted}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {quoted}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {quoted}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public"
        f" GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {quoted}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {quoted}",
        f"REVOKE ALL ON alembic_version FROM {quoted}",
    ):
        connection.exec_driver_sql(statement)
    if connection.execute(text("SELECT to_regclass('secret_audit')")).scalar() is not None:
        connection.exec_driver_sql(f"REVOKE UPDATE, DELETE ON secret_audit FROM {quoted}")
    return True


def with_role(url: str, role: AppRole) -> str:
    """``url`` logging in as ``role`` instead (the embedded server trusts local logins)."""
    return (
        make_url(url)
        .set(username=role.name, password=role.password)
        .render_as_string(hide_password=False)
    )
