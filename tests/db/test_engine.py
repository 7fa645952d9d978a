"""The pool's check before it lends a connection (``cairn.db.engine``): a pooled connection
whose backend ended (a restart, a terminated backend) is replaced before the next
transaction, which runs as if nothing happened."""

from __future__ import annotations

import asyncpg
from sqlalchemy import text
from tests.conftest import Services
from tests.waiting import eventually

from cairn.config import Settings
from cairn.db.engine import create_engine


async def test_a_connection_whose_backend_ended_in_the_pool_is_replaced(
    services: Services,
) -> None:
    engine = create_engine(services.postgres.url, Settings(), pool_size=1, max_overflow=0)
    try:
        async with engine.connect() as connection:
            first = await connection.scalar(text("SELECT pg_backend_pid()"))
            pooled = (await connection.get_raw_connection()).driver_connection
        admin = await asyncpg.connect(services.postgres.dsn)
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1, 5000)", first)
        finally:
            await admin.close()
        await eventually(pooled.is_closed, timeout=5)  # the server closed its end

        async with engine.connect() as connection:
            again = await connection.scalar(text("SELECT pg_backend_pid()"))
        assert again != first
    finally:
        await engine.dispose()


async def test_a_live_pooled_connection_is_lent_again(services: Services) -> None:
    engine = create_engine(services.postgres.url, Settings(), pool_size=1, max_overflow=0)
    try:
        pids = []
        for _ in range(3):
            async with engine.connect() as connection:
                pids.append(await connection.scalar(text("SELECT pg_backend_pid()")))
        assert len(set(pids)) == 1
    finally:
        await engine.dispose()
