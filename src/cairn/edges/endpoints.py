"""``/graph``: the records around one record, or around an assembled context's selection, and
the edges between them: what the console draws (subscribers; the caller's tenant only).
``/breadcrumbs/{id}/edges``: one record's edges, in and out, for its page."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from cairn.api.deps import PrincipalDep, SessionDep, require_role
from cairn.edges import view
from cairn.errors import InvalidInput
from cairn.principal import Role

router = APIRouter(tags=["graph"])
MAX_NODES = 500
MAX_EDGES = 500


class GraphNode(BaseModel):
    id: uuid.UUID
    title: str
    schema_name: str | None
    tags: list[str]
    selected: bool = Field(description="in the assembled context (?context= only)")
    path: list[uuid.UUID] | None = Field(
        description="the records that reached it, its seed first and itself last, from the "
        "context's explain (selected records only)"
    )


class GraphEdge(BaseModel):
    source: uuid.UUID
    target: uuid.UUID
    kind: Literal["causal", "temporal", "tag", "semantic"]
    weight: float


class Graph(BaseModel):
    nodes: list[GraphNode] = Field(description="nearest first: the start, then hop by hop")
    edges: list[GraphEdge]
    truncated: bool = Field(description="the walk stopped at `limit` records")


@router.get("/graph", dependencies=[require_role(Role.SUBSCRIBER)])
async def graph(
    session: SessionDep,
    principal: PrincipalDep,
    around: Annotated[uuid.UUID | None, Query(description="a record id")] = None,
    context: Annotated[uuid.UUID | None, Query(description="an agent.context.v1 id")] = None,
    depth: Annotated[int, Query(ge=1, le=3, description="hops from the start")] = 1,
    limit: Annotated[int, Query(ge=1, le=MAX_NODES, description="records, at most")] = 100,
) -> Graph:
    """Exactly one of ``around`` and ``context``; an unknown id is a 404."""
    owner = principal.owner_id
    if around is not None and context is None:
        found = await view.around(session, owner, around, depth, limit)
    elif context is not None and around is None:
        found = await view.of_context(session, owner, context, depth, limit)
    else:
        raise InvalidInput("give exactly one of around or context")
    return Graph.model_validate(found, from_attributes=True)


class RecordEdge(BaseModel):
    id: uuid.UUID = Field(description="the record at the other end")
    title: str
    schema_name: str | None
    kind: Literal["causal", "temporal", "tag", "semantic"]
    weight: float


class RecordEdges(BaseModel):
    outgoing: list[RecordEdge] = Field(description="edges from this record, strongest first")
    incoming: list[RecordEdge] = Field(description="edges to this record, strongest first")
    truncated: bool = Field(description="one direction had more than `limit` edges")


@router.get("/breadcrumbs/{breadcrumb_id}/edges", dependencies=[require_role(Role.SUBSCRIBER)])
async def record_edges(
    breadcrumb_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=MAX_EDGES, description="edges per direction")] = 100,
) -> RecordEdges:
    """The edges the worker built to and from one of the caller's tenant's records (an
    unknown id, or another tenant's, is a 404)."""
    found = await view.edges_of(session, principal.owner_id, breadcrumb_id, limit)
    return RecordEdges.model_validate(found, from_attributes=True)
