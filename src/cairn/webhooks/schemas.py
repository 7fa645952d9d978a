"""Request and response bodies of the webhook and dead-letter routes (RCRT-compatible)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from cairn.events.selectors import Selector

AGENT_ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"
MAX_URL_LENGTH = 2048


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH, description="http(s) only")
    selector: Selector | None = Field(
        default=None, description="which events to deliver (as SSE filters); all when absent"
    )
    secret: str | None = Field(
        default=None,
        min_length=8,
        max_length=512,
        description="sets the agent's signing secret; one is generated if the agent has none",
    )


class WebhookCreated(BaseModel):
    id: UUID
    url: str
    selector: Selector | None
    secret: str | None = Field(
        description="the agent's signing secret when this call set or generated it, else null"
    )


class WebhookListItem(BaseModel):
    id: UUID
    url: str
    selector: Selector | None
    created_at: datetime


class SecretBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    secret: str = Field(min_length=8, max_length=512)


class Ok(BaseModel):
    ok: bool = True


class Requeued(BaseModel):
    requeued: bool = True


class DeadLetter(BaseModel):
    id: UUID
    webhook_id: UUID
    agent_id: str
    url: str
    event_id: str
    payload: dict[str, Any]
    attempts: int
    last_error: str
    created_at: datetime
    updated_at: datetime
    requeued: bool = Field(description="a retry was asked for and has not started yet")
