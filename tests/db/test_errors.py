"""``is_unavailable`` on the exceptions a real PostgreSQL outage raises, through SQLAlchemy
and asyncpg as the service uses them, and on genuine query bugs that must stay bugs."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from tests.conftest import Services

from cairn.db.errors import is_unavailable
from cairn.runtime import free_port


@pytest.fixture
async def engine(services: Services) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(services.postgres.url, pool_size=1, max_overflow=0)
    yield engine
    await engine.dispose()


async def _terminate(services: Services, connection: AsyncConnection) -> None:
    """End ``connection``'s backend as a fast shutdown does (57P01), waiting until it is gone."""
    pid = await connection.scalar(text("SELECT pg_backend_pid()"))
    admin = await asyncpg.connect(services.postgres.dsn)
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1, 5000)", pid)
    finally:
        await admin.close()


async def _raised(engine: AsyncEngine, *statements: str) -> BaseException:
    try:
        async with engine.connect() as connection:
            for sql in statements:
                await connection.execute(text(sql))
    except Exception as error:
        return error
    raise AssertionError(f"{statements} did not fail")


async def test_nothing_listening_is_unavailable() -> None:
    engine = create_async_engine(f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/cairn")
    try:
        assert is_unavailable(await _raised(engine, "SELECT 1"))
    finally:
        await engine.dispose()


async def test_a_query_on_a_terminated_connection_is_unavailable(
    engine: AsyncEngine, services: Services
) -> None:
    with pytest.raises(Exception) as raised:
        async with engine.connect() as connection:
            await _terminate(services, connection)
            await connection.execute(text("SELECT 1"))
    assert is_unavailable(raised.value), repr(raised.value)


async def test_a_commit_on_a_terminated_connection_is_unavailable(
    engine: AsyncEngine, services: Services
) -> None:
    with pytest.raises(Exception) as raised:
        async with engine.connect() as connection:
            await connection.execute(text("CREATE TEMP TABLE t (x int)"))
            await _terminate(services, connection)
            await connection.commit()
    assert is_unavailable(raised.value), repr(raised.value)


async def test_an_exhausted_pool_is_unavailable(services: Services) -> None:
    engine = create_async_engine(
        services.postgres.url, pool_size=1, max_overflow=0, pool_timeout=0.1
    )
    try:
        async with engine.connect():
            raised = await _raised(engine, "SELECT 1")
    finally:
        await engine.dispose()
    assert is_unavailable(raised)


async def test_a_full_server_is_unavailable(engine: AsyncEngine, services: Services) -> None:
    role = f"full_{uuid.uuid4().hex[:8]}"
    async with engine.begin() as connection:
        await connection.execute(text(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 0"))
    url = services.postgres.url.replace("//postgres@", f"//{role}@")
    full = create_async_engine(url)
    try:
        raised = await _raised(full, "SELECT 1")
    finally:
        await full.dispose()
        async with engine.begin() as connection:
            await connection.execute(text(f"DROP ROLE {role}"))
    assert is_unavailable(raised)


@pytest.mark.parametrize(
    "statements",
    [
        ["SELEC 1"],  # syntax
        ["SELECT 1 / 0"],  # data
        ["SELECT * FROM no_such_table"],  # schema
        ["SET statement_timeout = 1", "SELECT pg_sleep(1)"],  # the query's own timeout
    ],
)
async def test_query_bugs_are_not_unavailable(engine: AsyncEngine, statements: list[str]) -> None:
    raised = await _raised(engine, *statements)
    assert not is_unavailable(raised), repr(raised)


async def test_a_unique_violation_is_not_unavailable(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        await connection.execute(text("CREATE TEMP TABLE once (x int PRIMARY KEY)"))
        await connection.execute(text("INSERT INTO once VALUES (1)"))
        with pytest.raises(Exception) as raised:
            await connection.execute(text("INSERT INTO once VALUES (1)"))
    assert not is_unavailable(raised.value)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.CannotConnectNowError("the database system is shutting down"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.InterfaceError("connection is closed"),
        ExceptionGroup("both", [ConnectionResetError(), TimeoutError()]),
    ],
)
def test_driver_shapes_of_an_outage_are_unavailable(error: Exception) -> None:
    assert is_unavailable(error)


def _wrapped(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as cause:
            raise outer from cause
    except Exception as error:
        return error


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError(2, "No such file", "/nowhere"),
        asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
        ValueError("bad input"),
        ExceptionGroup("mixed", [ConnectionResetError(), ValueError()]),
    ],
)
def test_other_errors_are_not_unavailable(error: Exception) -> None:
    assert not is_unavailable(error)


def test_an_outage_wrapped_by_another_error_is_unavailable() -> None:
    assert is_unavailable(_wrapped(RuntimeError("response already started"), OSError("down")))
    assert not is_unavailable(_wrapped(RuntimeError("bug"), KeyError("x")))
