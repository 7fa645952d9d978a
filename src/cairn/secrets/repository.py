"""Secret and audit queries, scoped to one tenant (and by row-level security again)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import RowMapping, any_, delete, literal, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.db.models import secret_audit, secrets

Row = RowMapping
INFO_COLUMNS = [
    secrets.c[name]
    for name in (
        "id", "name", "scope_type", "scope_id", "description", "readers",
        "created_at", "updated_at", "created_by", "updated_by",
    )
]  # fmt: skip


def readable_by(actor: str) -> Any:
    """Secrets an agent (not a curator) may see and decrypt."""
    return or_(
        literal(actor) == any_(secrets.c.readers),
        (secrets.c.scope_type == "agent") & (secrets.c.scope_id == actor),
    )


async def insert_secret(session: AsyncSession, values: dict[str, Any]) -> Row | None:
    """None when the tenant already has a secret of that name in that scope."""
    statement = insert(secrets).values(**values).on_conflict_do_nothing()
    result = await session.execute(statement.returning(*INFO_COLUMNS))
    return result.mappings().one_or_none()


async def get(
    session: AsyncSession, owner_id: uuid.UUID, secret_id: uuid.UUID, *, for_update: bool = False
) -> Row | None:
    query = select(secrets).where(secrets.c.owner_id == owner_id, secrets.c.id == secret_id)
    if for_update:
        query = query.with_for_update()
    return (await session.execute(query)).mappings().one_or_none()


async def list_info(
    session: AsyncSession,
    owner_id: uuid.UUID,
    actor: str | None,
    scope_type: str | None = None,
    scope_id: str | None = None,
) -> Sequence[Row]:
    """The tenant's secrets (``actor``'s readable ones unless None), of one scope type
    and scope id when given."""
    query = select(*INFO_COLUMNS).where(secrets.c.owner_id == owner_id)
    if actor is not None:
        query = query.where(readable_by(actor))
    if scope_type is not None:
        query = query.where(secrets.c.scope_type == scope_type)
    if scope_id is not None:
        query = query.where(secrets.c.scope_id == scope_id)
    query = query.order_by(secrets.c.scope_type, secrets.c.scope_id, secrets.c.name)
    return (await session.execute(query)).mappings().all()


async def update_secret(
    session: AsyncSession, owner_id: uuid.UUID, secret_id: uuid.UUID, values: dict[str, Any]
) -> Row | None:
    statement = (
        update(secrets)
        .where(secrets.c.owner_id == owner_id, secrets.c.id == secret_id)
        .values(**values)
        .returning(*INFO_COLUMNS)
    )
    return (await session.execute(statement)).mappings().one_or_none()


async def delete_secret(session: AsyncSession, owner_id: uuid.UUID, secret_id: uuid.UUID) -> bool:
    statement = delete(secrets).where(secrets.c.owner_id == owner_id, secrets.c.id == secret_id)
    return (await session.execute(statement.returning(secrets.c.id))).first() is not None


async def audit(
    session: AsyncSession,
    owner_id: uuid.UUID,
    secret_id: uuid.UUID,
    action: str,
    actor: str,
    reason: str | None = None,
) -> None:
    await session.execute(
        insert(secret_audit).values(
            owner_id=owner_id, secret_id=secret_id, action=action, actor=actor, reason=reason
        )
    )


async def audit_trail(
    session: AsyncSession, owner_id: uuid.UUID, secret_id: uuid.UUID, *, limit: int
) -> Sequence[Row]:
    query = (
        select(secret_audit)
        .where(secret_audit.c.owner_id == owner_id, secret_audit.c.secret_id == secret_id)
        .order_by(secret_audit.c.id)
        .limit(limit)
    )
    return (await session.execute(query)).mappings().all()


async def wrapped_elsewhere(session: AsyncSession, kek_id: str, *, limit: int) -> Sequence[Row]:
    """Secrets whose data key is wrapped by another KEK than ``kek_id`` (rotation)."""
    query = select(secrets).where(secrets.c.kek_id != kek_id).limit(limit).with_for_update()
    return (await session.execute(query)).mappings().all()
