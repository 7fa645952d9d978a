"""``GET /coverage``'s answer."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, Field


class StageFigures(BaseModel):
    done: int = 0
    pending: int = 0
    failed: int = 0
    not_needed: int = 0
    untracked: int = Field(
        0, description="live records with no state for this stage (written before it existed)"
    )
    percent: float = Field(
        100.0, description="done of the records that need the stage, 0-100 (100 when none do)"
    )


class Breakdown(BaseModel):
    records: int
    stages: dict[str, StageFigures]


class CommonError(BaseModel):
    stage: str
    error: str
    records: int


class Islands(BaseModel):
    count: int = Field(description="records with no edge at all (assembled contexts aside)")
    ids: list[uuid.UUID] = Field(description="the oldest few")


class Coverage(BaseModel):
    records: int
    stages: dict[str, StageFigures]
    errors: list[CommonError] = Field(description="the commonest errors of failed stages")
    by_schema: dict[str, Breakdown] = Field(description="schema_name ('-': none) → figures")
    by_session: dict[str, Breakdown] = Field(
        description="session tag prefix → figures, the largest first (at most a few dozen)"
    )
    islands: Islands
    computed_at: dt.datetime | None = Field(
        None, description="when these figures were counted (GET /coverage keeps them briefly)"
    )


class StageState(BaseModel):
    stage: str
    state: Literal["done", "pending", "failed", "not_needed", "untracked"] = Field(
        description="untracked: no state kept (the record predates the stage's tracking)"
    )
    attempts: int = 0
    done_at: dt.datetime | None = None
    last_error: str | None = None
    next_attempt_at: dt.datetime | None = Field(None, description="when the retry job looks again")
    updated_at: dt.datetime | None = None


class RecordProcessing(BaseModel):
    id: uuid.UUID
    stages: list[StageState] = Field(description="every stage, in processing order")
