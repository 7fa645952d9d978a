"""``/reindex``: the caller's tenant's reindex jobs and how far each got (curators)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.principal import Role
from cairn.reindex import jobs

router = APIRouter(tags=["reindex"])
CURATOR = require_role(Role.CURATOR)


class Failure(BaseModel):
    record_id: uuid.UUID
    error: str


class ReindexJob(BaseModel):
    id: uuid.UUID
    schema_name: str | None = Field(description="only records of this schema (null: all)")
    since: datetime | None = Field(description="only records updated at or after")
    origin: Literal["cli", "hints"] = Field(
        description="cli: `cairn reindex`; hints: a schema definition's hints changed"
    )
    state: Literal["pending", "running", "done"]
    total: int = Field(description="records selected when the job started")
    done: int = Field(description="records processed so far (failed ones included)")
    changed: int = Field(description="records whose llm_text changed")
    embedded: int
    edges: int = Field(description="edges written")
    failed: int
    failures: list[Failure] = Field(description="the most recent failed records")
    leased: bool = Field(description="a runner holds the job now")
    created_at: datetime
    started_at: datetime | None
    updated_at: datetime
    finished_at: datetime | None


@router.get("/reindex", dependencies=[CURATOR])
async def list_reindex_jobs(
    session: SessionDep,
    principal: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> list[ReindexJob]:
    """Newest first."""
    rows = await jobs.newest(session, principal.owner_id, limit)
    return [ReindexJob.model_validate(dict(row)) for row in rows]
