"""HTTP routes for webhooks, agent secrets and the dead-letter queue. Each is one service
call; all act for the caller's tenant."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, status

from cairn.api.deps import PrincipalDep, ResourcesDep, SessionDep, require_role
from cairn.errors import Forbidden
from cairn.principal import Role
from cairn.webhooks.schemas import (
    AGENT_ID_PATTERN,
    DeadLetter,
    Ok,
    Requeued,
    SecretBody,
    WebhookCreate,
    WebhookCreated,
    WebhookListItem,
)
from cairn.webhooks.service import DeadLetterService, WebhookService

router = APIRouter(tags=["webhooks"])
CURATOR = require_role(Role.CURATOR)


def get_webhooks(
    session: SessionDep, resources: ResourcesDep, principal: PrincipalDep
) -> WebhookService:
    return WebhookService(session, resources.settings, principal)


def get_dead_letters(session: SessionDep, principal: PrincipalDep) -> DeadLetterService:
    return DeadLetterService(session, principal)


AgentId = Annotated[
    str, Path(min_length=1, max_length=128, pattern=AGENT_ID_PATTERN, description="the agent")
]


def agent_or_curator(agent_id: AgentId, principal: PrincipalDep) -> None:
    """An agent manages its own webhooks and secret (RCRT's rule); a curator anyone's."""
    if not principal.has(Role.SUBSCRIBER):
        raise Forbidden("this operation needs the subscriber role")
    if agent_id != principal.actor and not principal.has(Role.CURATOR):
        raise Forbidden("only the agent itself or a curator manages an agent's webhooks")


OWN_AGENT = Depends(agent_or_curator)
WebhooksDep = Annotated[WebhookService, Depends(get_webhooks)]
DeadLettersDep = Annotated[DeadLetterService, Depends(get_dead_letters)]


@router.post(
    "/agents/{agent_id}/webhooks", status_code=status.HTTP_201_CREATED, dependencies=[OWN_AGENT]
)
async def register_webhook(
    agent_id: AgentId, body: WebhookCreate, webhooks: WebhooksDep
) -> WebhookCreated:
    return await webhooks.register(agent_id, body)


@router.get("/agents/{agent_id}/webhooks", dependencies=[OWN_AGENT])
async def list_webhooks(agent_id: AgentId, webhooks: WebhooksDep) -> list[WebhookListItem]:
    return await webhooks.active(agent_id)


@router.delete("/agents/{agent_id}/webhooks/{webhook_id}", dependencies=[OWN_AGENT])
async def delete_webhook(agent_id: AgentId, webhook_id: uuid.UUID, webhooks: WebhooksDep) -> Ok:
    await webhooks.deactivate(agent_id, webhook_id)
    return Ok()


@router.post("/agents/{agent_id}/secret", dependencies=[OWN_AGENT])
async def set_agent_secret(agent_id: AgentId, body: SecretBody, webhooks: WebhooksDep) -> Ok:
    await webhooks.set_secret(agent_id, body.secret)
    return Ok()


@router.get("/dlq", tags=["dead letters"], dependencies=[CURATOR])
async def list_dead_letters(
    dead_letters: DeadLettersDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[DeadLetter]:
    return await dead_letters.newest(limit)


@router.delete("/dlq/{entry_id}", tags=["dead letters"], dependencies=[CURATOR])
async def delete_dead_letter(entry_id: uuid.UUID, dead_letters: DeadLettersDep) -> Ok:
    await dead_letters.delete(entry_id)
    return Ok()


@router.post(
    "/dlq/{entry_id}/retry",
    status_code=status.HTTP_202_ACCEPTED,
    tags=["dead letters"],
    dependencies=[CURATOR],
)
async def retry_dead_letter(entry_id: uuid.UUID, dead_letters: DeadLettersDep) -> Requeued:
    await dead_letters.requeue(entry_id)
    return Requeued()
