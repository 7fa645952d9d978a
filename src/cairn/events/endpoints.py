"""``/worker/dead``: the breadcrumb events the worker (or webhook delivery) gave up on, for
the caller's tenant. Nothing a consumer gives up on is dropped silently: it is here."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.errors import NotFound
from cairn.events import dead_letters
from cairn.principal import Role

router = APIRouter(tags=["dead letters"])
CURATOR = require_role(Role.CURATOR)


class DeadEvent(BaseModel):
    id: uuid.UUID
    consumer: str = Field(description="which consumer gave up: cairn-worker or webhooks")
    subject: str
    stream_sequence: int
    event_id: str | None
    event_type: str | None
    breadcrumb_id: uuid.UUID | None
    deliveries: int
    reason: str
    payload: dict[str, Any]
    created_at: datetime


class Removed(BaseModel):
    ok: bool = True


@router.get("/worker/dead", dependencies=[CURATOR])
async def list_dead_events(
    session: SessionDep,
    principal: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[DeadEvent]:
    rows = await dead_letters.newest(session, principal.owner_id, limit)
    return [DeadEvent.model_validate(dict(row)) for row in rows]


@router.delete("/worker/dead/{entry_id}", dependencies=[CURATOR])
async def delete_dead_event(
    entry_id: uuid.UUID, session: SessionDep, principal: PrincipalDep
) -> Removed:
    if not await dead_letters.remove(session, principal.owner_id, entry_id):
        raise NotFound(f"no dead event {entry_id}")
    return Removed()
