"""RCRT's admin routes, for curators and scoped to the caller's tenant: ``/tenants`` (its
own tenant only; new tenants come with minting by the admin credential) and the agent
registry ``/agents``."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.auth import repository
from cairn.auth.schemas import Agent, AgentBody, Ok, Tenant, TenantBody
from cairn.auth.tokens import AGENT_ID_PATTERN
from cairn.errors import Forbidden, NotFound
from cairn.principal import Principal, Role

router = APIRouter(tags=["admin"], dependencies=[require_role(Role.CURATOR)])

AgentId = Annotated[str, Path(min_length=1, max_length=128, pattern=AGENT_ID_PATTERN)]


def _own(principal: Principal, tenant_id: uuid.UUID) -> None:
    if tenant_id != principal.owner_id:
        raise Forbidden("a curator administers its own tenant only")


@router.get("/tenants")
async def list_tenants(db: SessionDep, principal: PrincipalDep) -> list[Tenant]:
    row = await repository.get_tenant(db, principal.owner_id)
    return [Tenant(**row)] if row else []


@router.get("/tenants/{tenant_id}")
async def get_tenant(tenant_id: uuid.UUID, db: SessionDep, principal: PrincipalDep) -> Tenant:
    row = await repository.get_tenant(db, tenant_id) if tenant_id == principal.owner_id else None
    if row is None:
        raise NotFound(f"tenant {tenant_id} not found")
    return Tenant(**row)


@router.post("/tenants/{tenant_id}")
async def ensure_tenant(
    tenant_id: uuid.UUID, body: TenantBody, db: SessionDep, principal: PrincipalDep
) -> Tenant:
    _own(principal, tenant_id)
    return Tenant(**await repository.ensure_tenant(db, tenant_id, body.name))


@router.put("/tenants/{tenant_id}")
async def rename_tenant(
    tenant_id: uuid.UUID, body: TenantBody, db: SessionDep, principal: PrincipalDep
) -> Tenant:
    _own(principal, tenant_id)
    row = await repository.rename_tenant(db, tenant_id, body.name)
    if row is None:
        raise NotFound(f"tenant {tenant_id} not found")
    return Tenant(**row)


@router.get("/agents")
async def list_agents(db: SessionDep, principal: PrincipalDep) -> list[Agent]:
    return [Agent(**row) for row in await repository.list_agents(db, principal.owner_id)]


@router.get("/agents/{agent_id}")
async def get_agent(agent_id: AgentId, db: SessionDep, principal: PrincipalDep) -> Agent:
    row = await repository.get_agent(db, principal.owner_id, agent_id)
    if row is None:
        raise NotFound(f"agent {agent_id!r} is not registered")
    return Agent(**row)


@router.post("/agents/{agent_id}")
async def register_agent(
    body: AgentBody, agent_id: AgentId, db: SessionDep, principal: PrincipalDep
) -> Agent:
    return Agent(**await repository.upsert_agent(db, principal.owner_id, agent_id, body.roles))


@router.delete("/agents/{agent_id}")
async def delete_agent(agent_id: AgentId, db: SessionDep, principal: PrincipalDep) -> Ok:
    if not await repository.delete_agent(db, principal.owner_id, agent_id):
        raise NotFound(f"agent {agent_id!r} is not registered")
    return Ok()
