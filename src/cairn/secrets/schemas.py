"""Secrets on the wire (RCRT's fields). The value appears only in a decrypt response."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from cairn.webhooks.schemas import AGENT_ID_PATTERN

NAME_PATTERN = r"^[A-Za-z0-9._:/@-]{1,128}$"
AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]


class ScopeType(enum.StrEnum):
    GLOBAL = "global"
    WORKSPACE = "workspace"
    AGENT = "agent"  # scope_id names the agent, which may decrypt it
    TENANT = "tenant"  # RCRT's name for global: accepted in requests, never stored


class SecretCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    value: str
    scope_type: ScopeType = ScopeType.GLOBAL
    scope_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    description: str | None = Field(default=None, max_length=2048)
    # Agents (of this tenant) that may decrypt it besides curators.
    readers: list[AgentId] = Field(default_factory=list, max_length=64)


class SecretUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str | None = None
    description: str | None = Field(default=None, max_length=2048)
    readers: list[AgentId] | None = Field(default=None, max_length=64)


class DecryptRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=512)


class SecretInfo(BaseModel):
    id: uuid.UUID
    name: str
    scope_type: ScopeType
    scope_id: str | None
    description: str | None
    readers: list[str]
    created_at: datetime
    updated_at: datetime
    created_by: str | None
    updated_by: str | None


class DecryptedSecret(BaseModel):
    id: uuid.UUID
    name: str
    value: str


class AuditEntry(BaseModel):
    id: int
    secret_id: uuid.UUID
    action: str
    actor: str
    reason: str | None
    created_at: datetime
