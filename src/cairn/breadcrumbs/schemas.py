"""Request and response bodies of the breadcrumb API (RCRT-compatible field names)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class Visibility(StrEnum):
    public = "public"
    team = "team"
    private = "private"


class Sensitivity(StrEnum):
    low = "low"
    pii = "pii"
    secret = "secret"


SCHEMA_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/\-]{0,127}$"


class BreadcrumbCreate(BaseModel):
    # Unknown fields are ignored, as RCRT did: old clients send extra keys.
    model_config = ConfigDict(extra="ignore")

    schema_name: str | None = Field(default=None, pattern=SCHEMA_NAME_PATTERN)
    title: str = Field(min_length=1)
    description: str | None = None
    semantic_version: str | None = Field(default=None, max_length=64)
    tags: list[str] = Field(default_factory=list)
    context: dict[str, Any]
    llm_hints: dict[str, Any] | None = None
    visibility: Visibility = Visibility.team
    sensitivity: Sensitivity = Sensitivity.low
    ttl: datetime | None = None


class BreadcrumbUpdate(BaseModel):
    """A partial update: absent fields keep their value; nullable ones may be cleared."""

    model_config = ConfigDict(extra="ignore")

    schema_name: str | None = Field(default=None, pattern=SCHEMA_NAME_PATTERN)
    title: str | None = Field(default=None, min_length=1)
    description: str | None = None
    semantic_version: str | None = Field(default=None, max_length=64)
    tags: list[str] | None = None
    context: dict[str, Any] | None = None
    llm_hints: dict[str, Any] | None = None
    visibility: Visibility | None = None
    sensitivity: Sensitivity | None = None
    ttl: datetime | None = None


class TagsBody(BaseModel):
    tags: list[str]


class MergeBody(BaseModel):
    context: dict[str, Any]


class ReviewBody(BaseModel):
    reason: str | None = Field(default=None, max_length=4096)


class CreatedResult(BaseModel):
    id: UUID
    version: int


class ChangedResult(BaseModel):
    ok: bool = True
    id: UUID
    version: int


class BatchCreate(BaseModel):
    records: list[dict[str, Any]] = Field(
        min_length=1,
        description="create bodies (as POST /breadcrumbs), each with an optional "
        "idempotency_key; at most limits.max_batch_records",
    )


class BatchItemResult(BaseModel):
    """One record's answer: 201 created, 200 replayed (an earlier request with its key), or
    the error a single create would have answered."""

    index: int = Field(description="the record's position in the request, from 0")
    status: int
    id: UUID | None = Field(default=None, exclude_if=lambda value: value is None)
    version: int | None = Field(default=None, exclude_if=lambda value: value is None)
    error: str | None = Field(default=None, exclude_if=lambda value: value is None)
    detail: str | None = Field(default=None, exclude_if=lambda value: value is None)


class BatchResult(BaseModel):
    results: list[BatchItemResult] = Field(description="one per record, in the request's order")
    created: int
    replayed: int
    failed: int


class BreadcrumbListItem(BaseModel):
    id: UUID
    title: str
    tags: list[str]
    schema_name: str | None
    version: int
    updated_at: datetime


class TransformExplanation(BaseModel):
    """How a view's context came about (``?explain=true``)."""

    source: Literal["instance", "schema", "none"] = Field(
        description="whose llm_hints applied: the record's, its schema definition's, or none"
    )
    definition_id: UUID | None = None
    definition_version: int | None = None
    applied: bool = Field(description="false when the transform fell back to the raw context")
    error: str | None = Field(default=None, description="why the transform fell back")
    warnings: list[str] = Field(default_factory=list)
    elapsed_ms: float


class BreadcrumbContextView(BreadcrumbListItem):
    """What an LLM should see: on GET /breadcrumbs/{id} the context with hints applied."""

    description: str | None
    semantic_version: str | None
    context: dict[str, Any]
    llm_hints: dict[str, Any] | None
    created_at: datetime
    domains: list[str] = Field(
        default_factory=list,
        description="domain labels under the tenant's context.domains.v1 (empty: none apply)",
    )
    transform: TransformExplanation | None = Field(
        default=None, exclude_if=lambda value: value is None
    )


class RenderRequest(BaseModel):
    ids: list[UUID] = Field(min_length=1, max_length=1000)
    explain: bool = False


class RenderResult(BaseModel):
    items: list[BreadcrumbContextView] = Field(description="in the order asked, once each")
    missing: list[UUID] = Field(description="ids that do not exist (or are not visible)")


class SearchHit(BreadcrumbListItem):
    score: float = Field(
        description="vector mode: cosine similarity to the query, 1 is identical; hybrid "
        "mode: the fused score of the context builder's semantic seeds (0 to 1)"
    )
    context: dict[str, Any] | None = None
    similarity: float | None = Field(
        default=None, description="hybrid mode: the cosine part (null: the embedder is down)"
    )
    lexical: float | None = Field(default=None, description="hybrid mode: the BM25 part")


class BreadcrumbFull(BreadcrumbContextView):
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
    entity_keywords: list[str]


class HistoryEntry(BaseModel):
    version: int
    title: str
    tags: list[str]
    context: dict[str, Any]
    checksum: str
    change: str
    updated_at: datetime
    updated_by: str | None
