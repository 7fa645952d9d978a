"""Apply the Alembic revisions in ``migrations/`` from inside the process."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.db import leakproof
from cairn.db.roles import AppRole, provision

# Held while migrating so that several servers starting at once take turns.
_MIGRATION_LOCK = 0x6361_6972_6E00


def migrations_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url:
        config.attributes["url"] = url
    return config


def _upgrade(connection: Connection, revision: str, app_role: AppRole | None) -> None:
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    config = alembic_config()
    config.attributes["connection"] = connection
    if app_role is not None:
        config.attributes["app_role"] = app_role
    command.upgrade(config, revision)
    if revision == "head":
        leakproof.mark(connection)  # a superuser's migration only (cairn.db.leakproof)
        if app_role is not None:
            provision(connection, app_role)


async def upgrade(
    engine: AsyncEngine, revision: str = "head", *, app_role: AppRole | None = None
) -> None:
    """Migrate as ``engine``'s role (the schema owner); ``app_role`` is the role revision
    0005 creates for the application (default: derived from the settings)."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade, revision, app_role)
