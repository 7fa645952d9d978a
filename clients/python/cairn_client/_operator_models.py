"""Answers of the operator routes (tokens, tenants, webhooks, dead letters, coverage, reindex,
the assembly log, ACLs, secrets); ``cairn_client.models`` re-exports them."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from cairn_client._base import AclAction, Answer, Request, Role, ScopeType

# operations and access


class MintedToken(Answer):
    token: str
    token_type: str = "Bearer"
    owner_id: UUID
    agent_id: str
    roles: list[Role]
    exp: int


class Tenant(Answer):
    id: UUID
    name: str
    created_at: datetime


class Agent(Answer):
    agent_id: str
    roles: list[Role]
    created_at: datetime
    updated_at: datetime


class Ok(Answer):
    ok: bool = True


class Requeued(Answer):
    requeued: bool = True


class RevokeResult(Answer):
    rows: int


class ContextMatch(Request):
    path: str
    op: str = "eq"
    value: Any = None


class Selector(Request):
    """Which events a webhook or stream receives."""

    schema_name: str | None = None
    any_tags: list[str] | None = None
    all_tags: list[str] | None = None
    session: str | None = None
    context_match: list[ContextMatch] | None = None


class Webhook(Answer):
    id: UUID
    url: str
    selector: dict[str, Any] | None
    created_at: datetime | None = None
    secret: str | None = None


class DeadLetter(Answer):
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
    requeued: bool


class DeadEvent(Answer):
    id: UUID
    consumer: str
    subject: str
    stream_sequence: int
    event_id: str | None
    event_type: str | None
    breadcrumb_id: UUID | None
    deliveries: int
    reason: str
    payload: dict[str, Any]
    created_at: datetime


class StageFigures(Answer):
    done: int
    pending: int
    failed: int
    not_needed: int
    untracked: int
    percent: float


class CoverageBreakdown(Answer):
    records: int
    stages: dict[str, StageFigures]


class CommonError(Answer):
    stage: str
    error: str
    records: int


class Islands(Answer):
    count: int
    ids: list[UUID]


class StageState(Answer):
    """One stage of one record: done, pending, failed, not_needed or untracked."""

    stage: str
    state: str
    attempts: int
    done_at: datetime | None
    last_error: str | None
    next_attempt_at: datetime | None
    updated_at: datetime | None


class RecordProcessing(Answer):
    """``GET /breadcrumbs/{id}/processing``: every stage's state for one record."""

    id: UUID
    stages: list[StageState]


class WorkerConsumer(Answer):
    """The workers' shared consumer: ``state`` pulling or busy (a worker is there), none,
    no_consumer or unknown (NATS unreachable)."""

    name: str
    state: str
    waiting_pulls: int
    in_progress: int
    pending: int
    redelivered: int
    last_delivery: datetime | None


class Workers(Answer):
    """``GET /workers``."""

    consumers: list[WorkerConsumer]


class Coverage(Answer):
    """``GET /coverage``: how far the tenant's records got through each processing stage."""

    records: int
    stages: dict[str, StageFigures]
    errors: list[CommonError]
    by_schema: dict[str, CoverageBreakdown]
    by_session: dict[str, CoverageBreakdown]
    islands: Islands


class ReindexFailure(Answer):
    record_id: UUID
    error: str


class ReindexJob(Answer):
    """One reindex job of the tenant (``GET /reindex``) and how far it got."""

    id: UUID
    schema_name: str | None
    since: datetime | None
    origin: str  # cli or hints
    state: str  # pending, running or done
    total: int
    done: int
    changed: int
    embedded: int
    edges: int
    failed: int
    failures: list[ReindexFailure]
    leased: bool
    created_at: datetime
    started_at: datetime | None
    updated_at: datetime
    finished_at: datetime | None


class AssemblyLogEntry(Answer):
    """One assembly of the log (``GET /assemblies``)."""

    id: int
    agent_id: str
    origin: str  # worker, assemble or query
    session_tag: str | None
    trigger_id: UUID | None
    query_text: str | None
    domain: str | None
    seed_counts: dict[str, int]
    selected_ids: list[UUID]
    token_count: int
    token_budget: int
    timings_ms: dict[str, float]
    total_ms: float
    cache_hit: bool
    degraded: list[str]
    created_at: datetime


class AssemblyPage(Answer):
    items: list[AssemblyLogEntry]
    next_cursor: str | None


class AgentStats(Answer):
    agent_id: str
    count: int
    p50_ms: float
    p99_ms: float
    mean_tokens: float
    mean_budget_use: float | None
    cache_hits: int


class AssemblyStats(Answer):
    since: datetime | None
    agents: list[AgentStats]


class AclEntry(Answer):
    id: UUID
    breadcrumb_id: UUID
    grantee_owner_id: UUID
    grantee_agent_id: str | None
    action: AclAction
    actions: list[AclAction]
    created_at: datetime
    created_by: str | None


class SecretInfo(Answer):
    id: UUID
    name: str
    scope_type: ScopeType
    scope_id: str | None
    description: str | None
    readers: list[str]
    created_at: datetime
    updated_at: datetime
    created_by: str | None
    updated_by: str | None


class DecryptedSecret(Answer):
    id: UUID
    name: str
    value: str


class AuditEntry(Answer):
    id: int
    secret_id: UUID
    action: str
    actor: str
    reason: str | None
    created_at: datetime
