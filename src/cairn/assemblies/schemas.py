"""What ``GET /assemblies`` and ``GET /assemblies/stats`` answer."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field


class AssemblyLogEntry(BaseModel):
    id: int
    agent_id: str
    origin: str = Field(description="worker (an event), assemble or query (on demand)")
    session_tag: str | None
    trigger_id: uuid.UUID | None = Field(description="the stored trigger; none for a query")
    query_text: str | None = Field(description="an on-demand query (its first 2000 chars)")
    domain: str | None = Field(description="the trigger's domain, where the tenant has some")
    seed_counts: dict[str, int] = Field(description="seeds per source")
    selected_ids: list[uuid.UUID]
    token_count: int
    token_budget: int
    timings_ms: dict[str, float] = Field(description="milliseconds per phase, and total")
    total_ms: float
    cache_hit: bool
    degraded: list[str]
    created_at: datetime


class AssemblyPage(BaseModel):
    items: list[AssemblyLogEntry]
    next_cursor: str | None = Field(description="pass as cursor for the next (older) page")


class AgentStats(BaseModel):
    agent_id: str
    count: int
    p50_ms: float
    p99_ms: float
    mean_tokens: float
    mean_budget_use: float | None = Field(description="mean token_count / token_budget")
    cache_hits: int


class AssemblyStats(BaseModel):
    since: datetime | None
    agents: list[AgentStats]
