"""Engine and session factory; built by the composition roots, never at import time."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from cairn.config import Settings


def create_engine(url: str, settings: Settings) -> AsyncEngine:
    return create_async_engine(
        url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_pre_ping=True,
        # The asyncpg statement cache would keep plans across planner-setting changes
        # (hnsw.ef_search is set per transaction); SQLAlchemy's own cache still applies.
        connect_args={"server_settings": {"application_name": "cairn"}},
    )


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
