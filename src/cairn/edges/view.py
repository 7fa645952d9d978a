"""The graph around a record or an assembled context, for people to look at (the console's
graph page): a walk of the edges hop by hop, nearest records first, that stops at a fixed
number of records however dense the neighbourhood is."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import repository as records
from cairn.context.model import EdgeType
from cairn.edges import repository
from cairn.edges.repository import CONTEXT_SCHEMA
from cairn.errors import NotFound

TITLE_CHARS = 200
EDGES_PER_NODE = 8  # edges returned per node shown, at most
MAX_PATH = 16  # hops followed back along an explain's ``via`` chain
_KINDS = {kind.value: kind.name for kind in EdgeType}


@dataclass(slots=True)
class Node:
    id: uuid.UUID
    title: str
    schema_name: str | None
    tags: list[str]
    selected: bool = False
    path: list[uuid.UUID] | None = None


@dataclass(slots=True)
class Link:
    source: uuid.UUID
    target: uuid.UUID
    kind: str
    weight: float


@dataclass(slots=True)
class GraphView:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Link] = field(default_factory=list)
    truncated: bool = False


@dataclass(slots=True)
class RecordLink:
    id: uuid.UUID
    title: str
    schema_name: str | None
    kind: str
    weight: float


@dataclass(slots=True)
class RecordLinks:
    outgoing: list[RecordLink] = field(default_factory=list)
    incoming: list[RecordLink] = field(default_factory=list)
    truncated: bool = False


async def edges_of(
    session: AsyncSession, owner: uuid.UUID, record_id: uuid.UUID, limit: int
) -> RecordLinks:
    """One record's edges by direction, the other end named (at most ``limit`` each way)."""
    if not await repository.node_rows(session, owner, [record_id]):
        raise NotFound(f"breadcrumb {record_id} not found")
    found = RecordLinks()
    for row in await repository.edges_of(session, owner, record_id, limit + 1):
        if row.edge_type not in _KINDS:
            continue
        side = found.outgoing if row.direction == "out" else found.incoming
        kind, title = _KINDS[row.edge_type], (row.title or "")[:TITLE_CHARS]
        side.append(RecordLink(row.other, title, row.schema_name, kind, float(row.weight)))
    for side in (found.outgoing, found.incoming):
        if len(side) > limit:
            found.truncated = True
            del side[limit:]
    return found


async def around(
    session: AsyncSession, owner: uuid.UUID, record_id: uuid.UUID, depth: int, limit: int
) -> GraphView:
    if not await repository.node_rows(session, owner, [record_id]):
        raise NotFound(f"breadcrumb {record_id} not found")
    return await _view(session, owner, [record_id], {}, depth, limit)


async def of_context(
    session: AsyncSession, owner: uuid.UUID, context_id: uuid.UUID, depth: int, limit: int
) -> GraphView:
    """The selected records of an assembled context, each with the path that reached it
    (seed first, from the explanation's ``via``), and their neighbourhood."""
    row = await records.get(session, owner, context_id)
    if row is None or row["schema_name"] != CONTEXT_SCHEMA:
        raise NotFound(f"assembled context {context_id} not found")
    paths = selected_paths(row["context"])
    pinned = list(dict.fromkeys([*paths, *(step for path in paths.values() for step in path)]))
    return await _view(session, owner, pinned[:limit], paths, depth, limit)


def selected_paths(context: Any) -> dict[uuid.UUID, list[uuid.UUID]]:
    """``{selected record: [seed, ..., record]}`` from ``context.explain.selected``; an
    entry that is not as the assembler writes it is left out, never an error."""
    explain = context.get("explain") if isinstance(context, Mapping) else None
    items = explain.get("selected") if isinstance(explain, Mapping) else None
    via: dict[uuid.UUID, uuid.UUID | None] = {}
    for item in items if isinstance(items, list) else []:
        record_id = _uuid(item.get("record_id")) if isinstance(item, Mapping) else None
        if record_id is not None:
            via[record_id] = _uuid(item.get("via"))
    paths = {}
    for record_id, step in via.items():
        path = [record_id]
        while step is not None and step not in path and len(path) <= MAX_PATH:
            path.append(step)
            step = via.get(step)
        paths[record_id] = path[::-1]
    return paths


def _uuid(raw: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


async def _view(
    session: AsyncSession,
    owner: uuid.UUID,
    seeds: Sequence[uuid.UUID],
    paths: Mapping[uuid.UUID, list[uuid.UUID]],
    depth: int,
    limit: int,
) -> GraphView:
    ids, truncated = await _walk(session, owner, seeds, depth, limit)
    rows = {row.id: row for row in await repository.node_rows(session, owner, ids)}
    nodes = [
        Node(
            id=row.id,
            title=row.title[:TITLE_CHARS],
            schema_name=row.schema_name,
            tags=list(row.tags or []),
            selected=node_id in paths,
            path=paths.get(node_id),
        )
        for node_id in ids
        if (row := rows.get(node_id)) is not None
    ]
    shown = [node.id for node in nodes]
    edges = await repository.edges_among(session, owner, shown, EDGES_PER_NODE * len(shown))
    links = [Link(a, b, _KINDS[kind], weight) for a, b, kind, weight in edges if kind in _KINDS]
    return GraphView(nodes, links, truncated)


async def _walk(
    session: AsyncSession, owner: uuid.UUID, seeds: Sequence[uuid.UUID], depth: int, limit: int
) -> tuple[list[uuid.UUID], bool]:
    """The seeds, then each hop's newly reached records, until ``depth`` hops or ``limit``
    records; ``True`` with them when the limit cut the walk short."""
    seen = dict.fromkeys(seeds)
    frontier = list(seen)
    for _ in range(depth):
        if not frontier:
            break
        edges = await repository.edges_touching(session, owner, frontier, EDGES_PER_NODE * limit)
        reached = [n for a, b, _, _ in edges for n in (a, b) if n not in seen]
        frontier = list(dict.fromkeys(reached))
        if len(seen) + len(frontier) > limit:
            seen.update(dict.fromkeys(frontier[: limit - len(seen)]))
            return list(seen), True
        seen.update(dict.fromkeys(frontier))
    return list(seen), False
