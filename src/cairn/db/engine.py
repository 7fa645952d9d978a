"""Engines and session factories; built by the composition roots, never at import time.

Tenant isolation lives in the database (revision 0005): every tenant table has
``FORCE ROW LEVEL SECURITY`` with a policy on ``cairn_current_tenant()``, the value of the
transaction-local setting ``cairn.tenant``. A session made by :func:`tenant_session` sets it
right after ``BEGIN`` of each of its transactions (``set_config(..., true)`` = ``SET LOCAL``,
so it ends with the transaction and never leaks to the pooled connection's next user). A
session or connection without a tenant sees no tenant rows at all: forgetting to scope fails
closed, not open.

Two engines per process: the *application* engine (``DATABASE_URL``, a role without
``BYPASSRLS``) for requests, the worker and per-tenant background steps, and the *system*
engine (``CAIRN_ADMIN_DATABASE_URL``, the schema owner) for migrations and the few jobs that
legitimately span tenants: the outbox relay, the processing retries, the coverage gauges and
the DLQ requeue poll.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import Session, SessionTransaction

from cairn.config import Settings

log = logging.getLogger(__name__)

TENANT_SETTING = "cairn.tenant"
_TENANT_KEY = "cairn.tenant"
_SET_TENANT = text("SELECT set_config('cairn.tenant', :tenant, true)")


def create_engine(
    url: str, settings: Settings, *, pool_size: int | None = None, max_overflow: int | None = None
) -> AsyncEngine:
    engine = create_async_engine(
        url,
        pool_size=settings.db_pool_size if pool_size is None else pool_size,
        max_overflow=settings.db_max_overflow if max_overflow is None else max_overflow,
        pool_pre_ping=True,
        # The asyncpg statement cache would keep plans across planner-setting changes
        # (hnsw.ef_search is set per transaction); SQLAlchemy's own cache still applies.
        connect_args={"server_settings": {"application_name": "cairn"}},
    )
    engine.dialect.do_ping = _not_closed  # type: ignore[method-assign]
    return engine


def _not_closed(dbapi_connection: Any) -> bool:
    """The pool's check of a connection before it lends it (``pool_pre_ping``), without a
    round trip. SQLAlchemy's own ping for asyncpg sends BEGIN, a query and ROLLBACK: three
    round trips before every transaction, ~0.3 ms of each assembly
    (benchmarks/results/rls.md). asyncpg marks a connection closed as soon as the server
    closes its end (a restart, a terminated backend); False makes the pool reconnect, as
    after a failed ping. A connection that broke without the server closing it fails its
    first statement instead, which invalidates the pool as well (a 503 or a retry)."""
    return not dbapi_connection.driver_connection.is_closed()


class TenantScopedSession(Session):
    """A session whose transactions run with ``cairn.tenant`` set from ``info``."""


@event.listens_for(TenantScopedSession, "after_begin")
def _scope_transaction(
    session: Session, transaction: SessionTransaction, connection: Connection
) -> None:
    tenant = session.info.get(_TENANT_KEY)
    if tenant is not None:
        connection.execute(_SET_TENANT, {"tenant": str(tenant)})


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(
        engine, expire_on_commit=False, sync_session_class=TenantScopedSession
    )


def tenant_session(
    factory: async_sessionmaker[AsyncSession], owner_id: uuid.UUID, **kw: Any
) -> AsyncSession:
    """A session of ``factory`` whose every transaction sees only ``owner_id``'s rows (and
    records other tenants granted it by ACL)."""
    return factory(info={_TENANT_KEY: owner_id}, **kw)


def session_tenant(session: AsyncSession) -> uuid.UUID | None:
    tenant = session.info.get(_TENANT_KEY)
    return tenant if isinstance(tenant, uuid.UUID) else None


async def set_tenant(connection: AsyncConnection, owner_id: uuid.UUID) -> None:
    """Scope the current transaction of a plain connection to ``owner_id``."""
    await connection.execute(_SET_TENANT, {"tenant": str(owner_id)})


async def bypasses_rls(engine: AsyncEngine) -> bool:
    """Whether ``engine`` logs in as a superuser or a BYPASSRLS role."""
    async with engine.connect() as connection:
        query = "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        return bool(await connection.scalar(text(query)))


async def warn_if_rls_bypassed(engine: AsyncEngine) -> bool:
    """Log loudly when the application role bypasses row-level security (a superuser or
    BYPASSRLS role in DATABASE_URL: tenant isolation then rests on the queries alone)."""
    bypasses = await bypasses_rls(engine)
    user = engine.url.username
    if bypasses:
        log.warning(
            "DATABASE_URL logs in as %s, which bypasses row-level security; point it at the "
            "application role (see CAIRN_ADMIN_DATABASE_URL)",
            user,
        )
    return bool(bypasses)


def database_probe(sessions: async_sessionmaker[AsyncSession]) -> Callable[[], Awaitable[None]]:
    """A check that the database answers (raises when it does not): consumers call it to
    tell an outage from a failing query."""

    async def probe() -> None:
        async with sessions() as session:
            await session.execute(text("SELECT 1"))

    return probe
