"""Typed requests and answers of Cairn's routes, written from the server's OpenAPI schemas.

Answers accept fields they do not know (``extra="allow"``), so a newer server does not
break an older client; requests send only the fields given.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from cairn_client._base import (
    AclAction as AclAction,
    Answer as Answer,
    Request as Request,
    Role as Role,
    ScopeType as ScopeType,
    SearchMode as SearchMode,
    Sensitivity as Sensitivity,
    Visibility as Visibility,
)
from cairn_client._operator_models import (
    AclEntry as AclEntry,
    Agent as Agent,
    AgentStats as AgentStats,
    AssemblyLogEntry as AssemblyLogEntry,
    AssemblyPage as AssemblyPage,
    AssemblyStats as AssemblyStats,
    AuditEntry as AuditEntry,
    CommonError as CommonError,
    ContextMatch as ContextMatch,
    Coverage as Coverage,
    CoverageBreakdown as CoverageBreakdown,
    DeadEvent as DeadEvent,
    DeadLetter as DeadLetter,
    DecryptedSecret as DecryptedSecret,
    Islands as Islands,
    MintedToken as MintedToken,
    Ok as Ok,
    RecordProcessing as RecordProcessing,
    ReindexFailure as ReindexFailure,
    ReindexJob as ReindexJob,
    Requeued as Requeued,
    RevokeResult as RevokeResult,
    SecretInfo as SecretInfo,
    Selector as Selector,
    StageFigures as StageFigures,
    StageState as StageState,
    Tenant as Tenant,
    Webhook as Webhook,
    WorkerConsumer as WorkerConsumer,
    Workers as Workers,
)

# records


class Created(Answer):
    id: UUID
    version: int


class Changed(Answer):
    id: UUID
    version: int
    ok: bool = True


class BreadcrumbListItem(Answer):
    id: UUID
    title: str
    tags: list[str]
    schema_name: str | None
    version: int
    updated_at: datetime


class SearchHit(BreadcrumbListItem):
    score: float
    context: dict[str, Any] | None = None


class TransformExplanation(Answer):
    source: str
    applied: bool
    elapsed_ms: float
    definition_id: UUID | None = None
    definition_version: int | None = None
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)


class Breadcrumb(BreadcrumbListItem):
    """The LLM view (``GET /breadcrumbs/{id}``), or a list item with ``include_context``."""

    description: str | None = None
    semantic_version: str | None = None
    context: dict[str, Any]
    llm_hints: dict[str, Any] | None = None
    created_at: datetime
    transform: TransformExplanation | None = None


class BreadcrumbFull(Breadcrumb):
    owner_id: UUID
    visibility: Visibility
    sensitivity: Sensitivity
    checksum: str
    size_bytes: int
    ttl: datetime | None
    created_by: str | None
    updated_by: str | None
    llm_text: str | None
    embedding: list[float] | None
    entity_keywords: list[str] | None


class HistoryEntry(Answer):
    version: int
    title: str
    tags: list[str]
    context: dict[str, Any]
    checksum: str
    change: str
    updated_at: datetime
    updated_by: str | None


class RenderResult(Answer):
    items: list[dict[str, Any]]
    missing: list[UUID]


class BreadcrumbCreate(Request):
    title: str
    context: dict[str, Any]
    schema_name: str | None = None
    description: str | None = None
    semantic_version: str | None = None
    tags: list[str] = Field(default_factory=list)
    llm_hints: dict[str, Any] | None = None
    visibility: Visibility | None = None
    sensitivity: Sensitivity | None = None
    ttl: datetime | None = None


class BatchRecord(BreadcrumbCreate):
    """A record of ``create_breadcrumbs``; without an ``idempotency_key`` the client makes
    one, so that a retried batch never writes a record twice."""

    idempotency_key: str | None = None


class BatchItemResult(Answer):
    """201 created, 200 replayed (a request with its key came first), else the error."""

    index: int
    status: int
    id: UUID | None = None
    version: int | None = None
    error: str | None = None
    detail: str | None = None


class BatchResult(Answer):
    results: list[BatchItemResult]
    created: int
    replayed: int
    failed: int


class BreadcrumbUpdate(Request):
    """Only the fields set are sent (an explicit ``None`` clears a field)."""

    schema_name: str | None = None
    title: str | None = None
    description: str | None = None
    semantic_version: str | None = None
    tags: list[str] | None = None
    context: dict[str, Any] | None = None
    llm_hints: dict[str, Any] | None = None
    visibility: Visibility | None = None
    sensitivity: Sensitivity | None = None
    ttl: datetime | None = None


class PathFrame(Answer):
    """A debug-path frame: ``type`` is ``path_started``, ``path_waypoint``,
    ``path_resolved`` or ``path_abandoned``; ``seq`` the stream event it was made from.
    A waypoint's fields are set on ``path_waypoint``, the summary on ``path_resolved``."""

    type: str
    seq: int
    path_id: UUID
    session: str | None = None
    status: str | None = None
    signature: str | None = None
    sequence: int | None = None
    version: int | None = None
    waypoint_id: UUID | None = None
    waypoint_type: str | None = None
    summary: str | None = None
    source_record_id: UUID | None = None
    command: str | None = None
    files: list[str] = Field(default_factory=list)
    kiss_summary: str | None = None
    root_cause: str | None = None
    what_fixed_it: str | None = None
    abandon_reason: str | None = None


class Event(Answer):
    """One change from ``/events/stream``; ``seq`` is its stream sequence (``Last-Event-ID``)."""

    seq: int
    type: str
    event_id: str | None = None
    breadcrumb_id: UUID | None = None
    owner_id: UUID | None = None
    version: int | None = None
    schema_name: str | None = None
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    updated_at: datetime | None = None
    context: dict[str, Any] | None = None
    path: PathFrame | None = None  # a debug-path frame (``events(paths=True)``)


# contexts


class AssembledContext(Answer):
    """An ``agent.context.v1`` record: ``context`` holds ``formatted_context``, ``explain``,
    ``token_count``, ``timings_ms`` and the rest."""

    id: UUID
    version: int
    consumer_id: str
    session: str | None
    context: dict[str, Any]


class GraphNode(Answer):
    id: UUID
    title: str
    schema_name: str | None
    tags: list[str]
    selected: bool
    path: list[UUID] | None


class GraphEdge(Answer):
    source: UUID
    target: UUID
    kind: str
    weight: float


class Graph(Answer):
    """``GET /graph``: records nearest first, the edges between them, and whether the walk
    stopped at its limit."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool


class RecordEdge(Answer):
    id: UUID
    title: str
    schema_name: str | None
    kind: str
    weight: float


class RecordEdges(Answer):
    """``GET /breadcrumbs/{id}/edges``: the record's edges out and in, strongest first."""

    outgoing: list[RecordEdge]
    incoming: list[RecordEdge]
    truncated: bool


class ContextQuery(Request):
    """``POST /contexts/query``: exactly one of ``query``/``trigger_id``; at least one of
    ``agent_id``/``agent`` (an inline ``agent.def.v1`` context)."""

    query: str | None = None
    trigger_id: UUID | None = None
    agent_id: str | None = None
    agent: dict[str, Any] | None = None
    session: str | None = None
    budget: int | None = None
    debug: bool | None = None


class QueriedContext(Answer):
    formatted_context: str
    token_count: int
    token_budget: int
    breadcrumb_count: int
    explain: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    cache_hit: bool = False
    degraded: list[str] = Field(default_factory=list)


# debug paths

PathStatus = Literal["active", "resolved", "abandoned"]


class DebugPath(Answer):
    """A session's debug path (``GET /paths``): detected by the worker or started
    explicitly (then ``trigger_record_id`` is None)."""

    id: UUID
    session: str
    status: PathStatus
    signature: str | None
    sequence: int
    successes: int
    started_at: datetime
    last_at: datetime | None
    resolved_at: datetime | None
    trigger_record_id: UUID | None
    kiss_summary: str | None
    root_cause: str | None
    what_fixed_it: str | None
    files: list[str]
    abandon_reason: str | None
    abandoned_at: datetime | None


class LinkedRecord(Answer):
    id: UUID
    title: str | None
    schema_name: str | None


class PathWaypoint(Answer):
    id: UUID
    sequence: int
    type: str  # error, hypothesis, attempt, failure, success, revert, pivot, ...
    summary: str
    command: str | None
    files: list[str]
    signature: str | None
    source_record_id: UUID | None
    source: LinkedRecord | None  # the source record, while it exists


class PathDetail(Answer):
    """A path with its waypoints in sequence order (``GET /paths/{id}``)."""

    path: DebugPath
    waypoints: list[PathWaypoint]
