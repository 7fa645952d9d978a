"""What the ``/paths`` routes take and answer (also the MCP tools' answers)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from cairn.paths.queries import PathDetail, StoredWaypoint
from cairn.paths.store import StoredPath

SESSION = r"^(session:)?[^\s]{1,200}$"
PathStatus = Literal["active", "resolved", "abandoned"]
WaypointType = Literal[
    "error", "hypothesis", "attempt", "failure", "success", "revert", "pivot", "discovery",
    "resolution",
]  # fmt: skip


class PathStart(BaseModel):
    session: str = Field(pattern=SESSION, description="the session tag, `session:` optional")
    summary: str = Field(
        min_length=1, max_length=2000, description="the problem, as the first waypoint says it"
    )
    signature: str | None = Field(
        default=None, max_length=500, description="the error line, if there is one"
    )


class PathResolve(BaseModel):
    what_fixed_it: str | None = Field(
        default=None, max_length=1000, description="replaces the one extracted from waypoints"
    )
    root_cause: str | None = Field(
        default=None, max_length=1000, description="replaces the one extracted from waypoints"
    )


class PathAbandon(BaseModel):
    reason: str | None = Field(default=None, max_length=1000)


class PathView(BaseModel):
    id: uuid.UUID
    session: str
    status: PathStatus
    signature: str | None
    sequence: int = Field(description="waypoints so far")
    successes: int = Field(description="consecutive successes counted towards resolution")
    started_at: datetime
    last_at: datetime | None
    resolved_at: datetime | None
    trigger_record_id: uuid.UUID | None = Field(description="null: started explicitly")
    kiss_summary: str | None
    root_cause: str | None
    what_fixed_it: str | None
    files: list[str]
    abandon_reason: str | None
    abandoned_at: datetime | None

    @classmethod
    def of(cls, path: StoredPath) -> PathView:
        resolution, state = path.resolution, path.state
        return cls(
            id=path.id,
            session=path.session,
            status=state.status.value,  # a stored path is never idle
            signature=state.signature,
            sequence=state.sequence,
            successes=state.successes,
            started_at=path.started_at,
            last_at=state.last_at,
            resolved_at=path.resolved_at,
            trigger_record_id=path.trigger_record_id,
            kiss_summary=resolution.kiss_summary if resolution else None,
            root_cause=resolution.root_cause if resolution else None,
            what_fixed_it=resolution.what_fixed_it if resolution else None,
            files=list(resolution.files) if resolution else [],
            abandon_reason=path.abandon_reason,
            abandoned_at=path.abandoned_at,
        )


class LinkedRecord(BaseModel):
    id: uuid.UUID
    title: str | None
    schema_name: str | None


class WaypointView(BaseModel):
    id: uuid.UUID
    sequence: int
    type: WaypointType
    summary: str
    command: str | None
    files: list[str]
    signature: str | None
    source_record_id: uuid.UUID | None
    source: LinkedRecord | None = Field(description="the source record, while it exists")

    @classmethod
    def of(cls, waypoint: StoredWaypoint) -> WaypointView:
        context, source = waypoint.context, waypoint.source
        return cls(
            id=waypoint.id,
            sequence=context["sequence"],
            type=context["type"],
            summary=context.get("summary") or "",
            command=context.get("command"),
            files=list(context.get("files") or ()),
            signature=context.get("signature"),
            source_record_id=waypoint.source_id,
            source=LinkedRecord(id=source.id, title=source.title, schema_name=source.schema_name)
            if source
            else None,
        )


class PathDetailView(BaseModel):
    path: PathView
    waypoints: list[WaypointView] = Field(description="in sequence order")

    @classmethod
    def of(cls, detail: PathDetail) -> PathDetailView:
        return cls(
            path=PathView.of(detail.path), waypoints=[WaypointView.of(w) for w in detail.waypoints]
        )
