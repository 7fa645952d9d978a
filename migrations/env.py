"""Alembic environment: async engine, URL from the Cairn settings or the caller."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from cairn.config import get_settings
from cairn.db.models import metadata


def _url() -> str:
    # The schema owner migrates; the application role has no DDL rights.
    url = context.config.attributes.get("url") or get_settings().system_database_url
    if not url:
        raise SystemExit("No database: set DATABASE_URL (postgresql+asyncpg://...)")
    return str(url)


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


connection = context.config.attributes.get("connection")
if connection is not None:
    # Called from inside a running event loop (`cairn up`, tests): reuse its connection.
    _run(connection)
elif context.is_offline_mode():
    context.configure(url=_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async())
