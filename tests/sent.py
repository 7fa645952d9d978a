"""The statements a piece of code sends: those SQLAlchemy executes and those
``cairn.db.driver`` sends to asyncpg directly (asyncpg's query logger sees the latter and
the transaction control statements, SQLAlchemy's ``before_cursor_execute`` the former)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from asyncpg import Connection
from asyncpg.connection import LoggedQuery
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession


@contextlib.contextmanager
def _listening(target: Any, sent: list[str]) -> Iterator[None]:
    def seen(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    event.listen(target, "before_cursor_execute", seen)
    try:
        yield
    finally:
        event.remove(target, "before_cursor_execute", seen)


def _logger(sent: list[str]) -> Any:
    def logged(query: LoggedQuery) -> None:
        sent.append(query.query)

    return logged


@contextlib.contextmanager
def by_engine(engine: AsyncEngine) -> Iterator[list[str]]:
    """Every statement sent meanwhile on a connection the engine lends out from now on."""
    sent: list[str] = []
    logged = _logger(sent)
    pool = engine.sync_engine.pool

    def lent(dbapi_connection: Any, *_: Any) -> None:
        dbapi_connection.driver_connection.add_query_logger(logged)

    def returned(dbapi_connection: Any, *_: Any) -> None:
        dbapi_connection.driver_connection.remove_query_logger(logged)

    event.listen(pool, "checkout", lent)
    event.listen(pool, "checkin", returned)
    try:
        with _listening(engine.sync_engine, sent):
            yield sent
    finally:
        event.remove(pool, "checkout", lent)
        event.remove(pool, "checkin", returned)


@contextlib.asynccontextmanager
async def by_session(session: AsyncSession) -> Any:
    """Every statement sent meanwhile on the session's connection (its transaction begun)."""
    sent: list[str] = []
    connection = await session.connection()
    driver: Connection = (await connection.get_raw_connection()).driver_connection
    logged = _logger(sent)
    driver.add_query_logger(logged)
    try:
        with _listening(connection.sync_connection, sent):
            yield sent
    finally:
        driver.remove_query_logger(logged)
