"""An assembly's statements on a session's own connection, through asyncpg without
SQLAlchemy's execution and result layers.

SQLAlchemy makes a ``Row`` of each record asyncpg returns, and a mapping of it on request:
a few microseconds a row, ~0.3 ms of an assembly at 100k for the ~200 records and ~120
blocks it reads; and each statement it sends costs 0.1-0.4 ms of Python of its own (the
session, bind and result processing, the cursor adapter; benchmarks/results/driver.md). The
statements of the assembly's hot path go to asyncpg directly, on the session's connection
and inside its transaction, so under the same tenant scope and snapshot as everything
around them; every other query keeps SQLAlchemy.

Why by hand: SQLAlchemy has no lighter result mode for ``text()`` queries, and asyncpg's
records already read by column name as the callers expect. The statement is compiled once,
by SQLAlchemy's own asyncpg dialect (``$n`` placeholders in its parameter order). Errors
are asyncpg's own; ``cairn.db.errors`` tells an outage among them as among SQLAlchemy's.

:func:`while_answered` lets an assembly do the Python that does not need a statement's
answer while PostgreSQL works on it, instead of the two taking turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import TextClause
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.selectable import TextualSelect

_DIALECT = PGDialect_asyncpg()  # type: ignore[no-untyped-call]

T = TypeVar("T")
U = TypeVar("U")


class DriverQuery:
    """A ``text()`` query sent as asyncpg's: the same SQL, the same named parameters."""

    def __init__(self, statement: TextClause | TextualSelect) -> None:
        self.statement = statement
        compiled = statement.compile(dialect=_DIALECT)
        self.sql = compiled.string
        self.names = tuple(compiled.positiontup or ())

    async def fetch(self, session: AsyncSession, params: Mapping[str, Any]) -> Sequence[Any]:
        """The rows, each read by column name (``row["id"]``). A session whose transaction
        has not yet sent anything runs the query through SQLAlchemy, which begins it (and
        scopes it to its tenant) first."""
        driver = await _driver_of(session)
        if driver is None or not driver.is_in_transaction():
            return (await session.execute(self.statement, params)).mappings().all()
        rows: Sequence[Any] = await driver.fetch(self.sql, *(params[n] for n in self.names))
        return rows


async def _driver_of(session: AsyncSession) -> Any:
    """The asyncpg connection of the session's transaction. Asking the session for it
    costs a greenlet round (~50 µs, ~0.35 ms of an assembly's seven statements), so it is
    kept in the session's ``info`` with the transaction it belongs to, and asked again once
    that transaction is over: a later one may hold another pooled connection."""
    transaction = session.sync_session.get_transaction()  # the root one, not a savepoint
    held = session.info.get(_HELD)
    if transaction is not None and held is not None and held[0] is transaction:
        return held[1]
    connection = await (await session.connection()).get_raw_connection()
    driver = connection.driver_connection
    session.info[_HELD] = (session.sync_session.get_transaction(), driver)
    return driver


_HELD = "cairn.driver_connection"


async def while_answered(asked: Awaitable[T], work: Callable[[], U]) -> tuple[T, U]:
    """``asked``'s answer and ``work()``'s result, ``work`` done while PostgreSQL answers:
    ``asked`` (a coroutine of the session's statements) runs until it waits for its first
    answer, then ``work`` runs, which must not use the session. An assembly's Python and
    its statements otherwise take turns on two cores. Whatever ``work`` raises, ``asked``
    is waited for: a session is never left with a statement running."""
    pending = asyncio.ensure_future(asked)
    try:
        await asyncio.sleep(0)  # the statement goes out
        done = work()
    finally:
        answer = await pending
    return answer, done
