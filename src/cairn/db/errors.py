"""Telling "the database is unreachable" apart from a genuine query bug.

An outage reaches the code in many shapes: asyncpg raises ``ConnectionRefusedError`` (or
``OSError``) when nothing listens, ``CannotConnectNowError`` while PostgreSQL starts or stops,
``AdminShutdownError`` to sessions a fast shutdown ends, ``ConnectionDoesNotExistError`` or
``InterfaceError("connection is closed")`` on a connection that died mid-query, and
``TooManyConnectionsError`` when it is full; SQLAlchemy wraps some of them in
``OperationalError``/``InterfaceError``/``DBAPIError`` (``orig``, ``__cause__``) and raises its
own ``TimeoutError`` when its pool has no connection to give. The API answers all of these
with 503, and the worker and webhook delivery retry them later; everything else is a bug.
"""

from __future__ import annotations

import asyncpg
from sqlalchemy import exc as sa_exc

# SQLSTATEs of an unreachable server: class 08 (connection exception) by prefix, then the
# operator-intervention shutdowns (admin, crash, "cannot connect now") and a full server.
# Not 57014 (query_canceled): a statement timeout is the query's own problem.
_CONNECTION_CLASS = "08"
_UNAVAILABLE_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})
_UNAVAILABLE_TYPES: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
    sa_exc.TimeoutError,  # the pool's: "QueuePool limit ... connection timed out"
    TimeoutError,  # asyncpg's connect timeout (asyncio.TimeoutError is this one)
)
_CLOSED_CONNECTION = "connection is closed"  # asyncpg's InterfaceError on a dead connection
_CHAIN_LIMIT = 16  # a cycle in __cause__/__context__ must not loop forever


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the database cannot be reached right now (retry later), rather
    than a bug in a query or in the data (an answer that a retry would not change).

    Looks at ``exc`` and everything it wraps: SQLAlchemy's ``orig``, ``__cause__`` and
    ``__context__``, and every member of an exception group. Pure: no I/O, no logging.
    """
    if isinstance(exc, BaseExceptionGroup):
        return bool(exc.exceptions) and all(is_unavailable(e) for e in exc.exceptions)
    return any(_names_an_outage(link) for link in _chain(exc))


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps, breadth first, each once (chains may have cycles)."""
    links = [exc]
    for current in links:
        if len(links) >= _CHAIN_LIMIT:
            break
        original = (
            getattr(current, "orig", None) if isinstance(current, sa_exc.DBAPIError) else None
        )
        for wrapped in (original, current.__cause__, current.__context__):
            if isinstance(wrapped, BaseException) and all(wrapped is not seen for seen in links):
                links.append(wrapped)
    return links


def _names_an_outage(exc: BaseException) -> bool:
    if isinstance(exc, _UNAVAILABLE_TYPES):
        return True
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True  # SQLAlchemy saw the connection drop and discarded it
    if isinstance(exc, OSError):
        # A socket error (refused, reset, unreachable host, unknown name); file errors
        # carry a file name and are bugs like any other.
        return exc.filename is None
    if isinstance(exc, asyncpg.InterfaceError | sa_exc.InterfaceError):
        return _CLOSED_CONNECTION in str(exc)
    state = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None)
    if isinstance(state, str):
        return state.startswith(_CONNECTION_CLASS) or state in _UNAVAILABLE_STATES
    return False


# A concurrent transaction won: PostgreSQL aborted this one, and the same request would
# succeed if made again (deadlock_detected, serialization_failure).
_RETRYABLE_STATES = frozenset({"40P01", "40001"})


def is_retryable_conflict(exc: BaseException) -> bool:
    """Whether PostgreSQL aborted the transaction for a concurrent one (a deadlock, a
    serialization failure): nothing was changed, and retrying the request would succeed."""
    for link in _chain(exc):
        state = getattr(link, "sqlstate", None) or getattr(link, "pgcode", None)
        if state in _RETRYABLE_STATES:
            return True
    return False
