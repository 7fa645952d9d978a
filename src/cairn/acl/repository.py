"""ACL queries. Writes and listings are scoped to the record owner's tenant; the checks
look up grants naming the caller (row-level security lets a grantee read those rows)."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import ColumnElement, delete, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import breadcrumb_acl
from cairn.principal import Principal

Row = Any


def grants_to(principal: Principal, actions: Collection[str]) -> ColumnElement[bool]:
    """ACL rows granting one of ``actions`` to the caller's agent or its whole tenant."""
    return (
        (breadcrumb_acl.c.grantee_owner_id == principal.owner_id)
        & or_(
            breadcrumb_acl.c.grantee_agent_id.is_(None),
            breadcrumb_acl.c.grantee_agent_id == principal.actor,
        )
        & breadcrumb_acl.c.action.in_(list(actions))
    )


def granted_ids(principal: Principal, actions: Collection[str]) -> Any:
    """A subquery of the record ids granted to the caller for one of ``actions``."""
    return select(breadcrumb_acl.c.breadcrumb_id).where(grants_to(principal, actions))


async def is_granted(
    session: AsyncSession, principal: Principal, breadcrumb_id: uuid.UUID, actions: Collection[str]
) -> bool:
    query = select(breadcrumb_acl.c.id).where(
        breadcrumb_acl.c.breadcrumb_id == breadcrumb_id, grants_to(principal, actions)
    )
    return (await session.execute(query.limit(1))).first() is not None


async def granted_record_ids(
    session: AsyncSession, principal: Principal, actions: Collection[str], *, limit: int
) -> list[uuid.UUID]:
    rows = await session.execute(granted_ids(principal, actions).distinct().limit(limit))
    return [row[0] for row in rows]


async def upsert(session: AsyncSession, values: dict[str, Any]) -> Row:
    """One entry per (record, grantee, action): granting again returns the existing one."""
    statement = insert(breadcrumb_acl).values(id=uuid.uuid4(), **values)
    statement = statement.on_conflict_do_update(
        index_elements=[
            breadcrumb_acl.c.breadcrumb_id,
            breadcrumb_acl.c.grantee_owner_id,
            breadcrumb_acl.c.grantee_agent_id,
            breadcrumb_acl.c.action,
        ],
        set_={"created_by": breadcrumb_acl.c.created_by},
    )
    return (await session.execute(statement.returning(breadcrumb_acl))).mappings().one()


async def list_entries(
    session: AsyncSession, owner_id: uuid.UUID, breadcrumb_id: uuid.UUID | None, *, limit: int
) -> Sequence[Row]:
    query = select(breadcrumb_acl).where(breadcrumb_acl.c.owner_id == owner_id)
    if breadcrumb_id is not None:
        query = query.where(breadcrumb_acl.c.breadcrumb_id == breadcrumb_id)
    query = query.order_by(breadcrumb_acl.c.created_at, breadcrumb_acl.c.id).limit(limit)
    return (await session.execute(query)).mappings().all()


async def revoke(
    session: AsyncSession,
    owner_id: uuid.UUID,
    breadcrumb_id: uuid.UUID,
    grantee_owner_id: uuid.UUID,
    grantee_agent_id: str | None,
    action: str,
) -> int:
    agent = breadcrumb_acl.c.grantee_agent_id
    statement = delete(breadcrumb_acl).where(
        breadcrumb_acl.c.owner_id == owner_id,
        breadcrumb_acl.c.breadcrumb_id == breadcrumb_id,
        breadcrumb_acl.c.grantee_owner_id == grantee_owner_id,
        agent.is_(None) if grantee_agent_id is None else agent == grantee_agent_id,
        breadcrumb_acl.c.action == action,
    )
    result = await session.execute(statement.returning(breadcrumb_acl.c.id))
    return len(result.all())


async def delete_entry(
    session: AsyncSession, owner_id: uuid.UUID, acl_id: uuid.UUID, breadcrumb_id: uuid.UUID | None
) -> bool:
    statement = delete(breadcrumb_acl).where(
        breadcrumb_acl.c.owner_id == owner_id, breadcrumb_acl.c.id == acl_id
    )
    if breadcrumb_id is not None:
        statement = statement.where(breadcrumb_acl.c.breadcrumb_id == breadcrumb_id)
    result = await session.execute(statement.returning(breadcrumb_acl.c.id))
    return result.first() is not None
