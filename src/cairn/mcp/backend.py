"""What the MCP tools need from Cairn: one narrow interface, two implementations."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from cairn.paths.schemas import PathDetailView, PathStatus, PathView

SearchMode = Literal["hybrid", "vector"]
Record = dict[str, Any]


class Remembered(BaseModel):
    id: uuid.UUID = Field(description="the new record's id (give it to get_record)")
    version: int = Field(description="1 for a new record")


class SearchResults(BaseModel):
    mode: SearchMode = Field(description="the search that ran (hybrid falls back to vector)")
    hits: list[Record] = Field(description="best first; `score` is the match, 1 is identical")


class Records(BaseModel):
    records: list[Record] = Field(description="newest first")


class PathList(BaseModel):
    paths: list[PathView] = Field(description="the latest started first")


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """An on-demand context request, as ``POST /contexts/query`` takes it."""

    query: str
    agent_id: str | None = None
    agent: dict[str, Any] | None = None  # an inline agent.def.v1 context
    session: str | None = None
    budget: int | None = None

    def body(self) -> dict[str, Any]:
        fields = {
            "query": self.query,
            "agent_id": self.agent_id,
            "agent": self.agent,
            "session": self.session.removeprefix("session:") if self.session else None,
            "budget": self.budget,
        }
        return {name: value for name, value in fields.items() if value is not None}


def session_tag(session: str) -> str:
    """The tag that puts a record in a session (``abc`` and ``session:abc`` both name it)."""
    return f"session:{session.removeprefix('session:')}"


class CairnBackend(Protocol):
    """Cairn as the tools see it. Errors are ``CairnError``s carrying Cairn's
    ``{error, detail}``; the tools turn them into MCP tool errors."""

    async def remember(
        self,
        *,
        schema_name: str | None,
        title: str,
        context: dict[str, Any],
        tags: list[str],
        session: str | None,
    ) -> Remembered: ...

    async def search(
        self, text: str, *, mode: SearchMode, schema_name: str | None, limit: int
    ) -> SearchResults: ...

    async def get_context(self, request: ContextQuery) -> dict[str, Any]: ...

    async def get_record(self, record_id: uuid.UUID) -> Record: ...

    async def recent(self, session: str, *, limit: int) -> Records: ...

    async def path_start(
        self, session: str, summary: str, signature: str | None
    ) -> PathDetailView: ...

    async def path_resolve(
        self, path_id: uuid.UUID, what_fixed_it: str | None, root_cause: str | None
    ) -> PathDetailView: ...

    async def path_show(self, path_id: uuid.UUID) -> PathDetailView: ...

    async def path_active(self, session: str) -> PathDetailView | None: ...

    async def path_list(
        self, status: PathStatus | None, session: str | None, limit: int
    ) -> PathList: ...
