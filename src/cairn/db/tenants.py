"""Tenants: created on demand; the default one exists from the first start."""

from __future__ import annotations

import uuid

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.db.engine import set_tenant
from cairn.db.models import tenants


async def ensure_tenant(engine: AsyncEngine, tenant_id: uuid.UUID, name: str) -> None:
    # Scoped to the tenant itself: row-level security lets a tenant create only its own row.
    async with engine.begin() as connection:
        await set_tenant(connection, tenant_id)
        await connection.execute(
            insert(tenants).values(id=tenant_id, name=name).on_conflict_do_nothing()
        )
