"""Request and response bodies of ``/auth/token``, ``/tenants`` and ``/agents``."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field, computed_field

from cairn.auth.tokens import AGENT_ID_PATTERN
from cairn.principal import Role

TEN_YEARS_S = 10 * 365 * 24 * 3600


class MintRequest(BaseModel):
    """RCRT's token request. ``owner_id`` defaults to the caller's tenant (the default tenant
    for the admin credential); ``roles`` to the caller's (every role for the admin)."""

    owner_id: uuid.UUID | None = None
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    roles: list[Role] | None = Field(default=None, min_length=1, max_length=3)
    ttl_sec: int | None = Field(default=None, ge=60, le=TEN_YEARS_S)
    tenant_name: str | None = Field(default=None, min_length=1, max_length=200)


class MintedToken(BaseModel):
    token: str
    token_type: str = "Bearer"
    owner_id: uuid.UUID
    agent_id: str
    roles: list[Role]
    exp: int


class TenantBody(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class Tenant(BaseModel):
    id: uuid.UUID
    name: str
    created_at: datetime


class AgentBody(BaseModel):
    roles: list[Role] = Field(min_length=1, max_length=3)


class Agent(BaseModel):
    agent_id: str
    roles: list[Role]
    created_at: datetime
    updated_at: datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """RCRT's key for the agent (its clients read ``id``)."""
        return self.agent_id


class Ok(BaseModel):
    ok: bool = True
