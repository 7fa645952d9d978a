"""Queries for tenants and the agent registry; every one is scoped to one tenant."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import agents, tenants
from cairn.errors import Conflict
from cairn.principal import Role

Row = dict[str, Any]
_AGENT_COLUMNS = (agents.c.agent_id, agents.c.roles, agents.c.created_at, agents.c.updated_at)


async def get_tenant(session: AsyncSession, owner_id: uuid.UUID) -> Row | None:
    result = await session.execute(select(tenants).where(tenants.c.id == owner_id))
    row = result.mappings().first()
    return dict(row) if row else None


async def ensure_tenant(session: AsyncSession, owner_id: uuid.UUID, name: str | None) -> Row:
    """Create the tenant if missing; rename it when ``name`` is given. 409 on a taken name."""
    values = {"id": owner_id, "name": name or str(owner_id)}
    statement = insert(tenants).values(**values)
    if name is not None:
        statement = statement.on_conflict_do_update(index_elements=["id"], set_={"name": name})
    else:
        statement = statement.on_conflict_do_nothing(index_elements=["id"])
    await _unique(session, statement.returning(tenants.c.id), f"tenant name {name!r} is taken")
    row = await get_tenant(session, owner_id)
    assert row is not None
    return row


async def rename_tenant(session: AsyncSession, owner_id: uuid.UUID, name: str) -> Row | None:
    statement = update(tenants).where(tenants.c.id == owner_id).values(name=name)
    await _unique(session, statement.returning(tenants.c.id), f"tenant name {name!r} is taken")
    return await get_tenant(session, owner_id)


async def list_agents(session: AsyncSession, owner_id: uuid.UUID) -> list[Row]:
    statement = (
        select(*_AGENT_COLUMNS).where(agents.c.owner_id == owner_id).order_by(agents.c.agent_id)
    )
    return [dict(row) for row in (await session.execute(statement)).mappings()]


async def get_agent(session: AsyncSession, owner_id: uuid.UUID, agent_id: str) -> Row | None:
    statement = select(*_AGENT_COLUMNS).where(
        agents.c.owner_id == owner_id, agents.c.agent_id == agent_id
    )
    row = (await session.execute(statement)).mappings().first()
    return dict(row) if row else None


async def upsert_agent(
    session: AsyncSession, owner_id: uuid.UUID, agent_id: str, roles: Iterable[Role]
) -> Row:
    names = sorted(role.value for role in roles)
    statement = (
        insert(agents)
        .values(owner_id=owner_id, agent_id=agent_id, roles=names)
        .on_conflict_do_update(
            index_elements=["owner_id", "agent_id"], set_={"roles": names, "updated_at": func.now()}
        )
        .returning(*_AGENT_COLUMNS)
    )
    return dict((await session.execute(statement)).mappings().one())


async def delete_agent(session: AsyncSession, owner_id: uuid.UUID, agent_id: str) -> bool:
    statement = delete(agents).where(agents.c.owner_id == owner_id, agents.c.agent_id == agent_id)
    result = await session.execute(statement.returning(agents.c.agent_id))
    return result.first() is not None


async def _unique(session: AsyncSession, statement: Any, message: str) -> None:
    try:
        async with session.begin_nested():
            await session.execute(statement)
    except IntegrityError as error:
        raise Conflict(message) from error
