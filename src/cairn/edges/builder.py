"""Build a breadcrumb's edges when it is created or updated (idempotent upserts).

- causal (0): the context references another record — ``trigger_event_id`` (an event id),
  ``reply_to`` / ``parent_id`` (record ids) — or answers a ``requestId`` that another
  record's ``tool_requests`` asked for (either arrival order); and from each record a
  ``dependencies`` / ``depends_on`` list names, once that record is finished (see
  :func:`_dependencies`);
- temporal (1): the previous record of the same ``session:*``;
- tag (2): recent records sharing a non-routing tag (tag pointers), capped;
- semantic (3): the k nearest neighbours above a similarity threshold; weight = similarity.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.edges import repository
from cairn.edges.neighbours import find_neighbours
from cairn.embedding import tag_pointers

CAUSAL, TEMPORAL, TAG, SEMANTIC = 0, 1, 2, 3
ID_REFERENCES = ("reply_to", "parent_id", "breadcrumb_id", "source_id")
EVENT_REFERENCES = ("trigger_event_id",)
LIST_REFERENCES = ("dependencies", "depends_on")
FINISHED = "completed"


@dataclass(frozen=True, slots=True)
class EdgeOptions:
    tag_neighbours: int = 5
    semantic_neighbours: int = 5
    semantic_min_similarity: float = 0.55


Edge = tuple[uuid.UUID, uuid.UUID, int, float]
Link = tuple[uuid.UUID, uuid.UUID]


async def build_edges(
    session: AsyncSession, record: Mapping[Any, Any], options: EdgeOptions
) -> Counter[int]:
    """Upsert every edge of ``record`` (a breadcrumb row); returns how many of each type."""
    if record["schema_name"] == repository.CONTEXT_SCHEMA:
        return Counter()
    owner: uuid.UUID = record["owner_id"]
    linked, unlinked = await _dependencies(session, record)
    edges = [
        *await _causal(session, record),
        *linked,
        *await _neighbouring(session, record, options),
    ]
    edges = [edge for edge in edges if edge[0] != edge[1]]
    kept = {(a, b) for a, b, edge_type, _ in edges if edge_type == CAUSAL}
    unlinked = sorted(set(unlinked) - kept)  # a reply_to between the two still holds
    if edges or unlinked:
        ends = {end for edge in edges for end in edge[:2]} | {
            end for link in unlinked for end in link
        }
        present = await repository.lock_endpoints(session, owner, list(ends))
        # Only between records that still exist, written in key order (as deletes lock them).
        edges = sorted(edge for edge in edges if edge[0] in present and edge[1] in present)
    await repository.delete_edges(session, owner, unlinked, CAUSAL)
    await repository.upsert_edges(session, owner, edges)
    return Counter(edge_type for _, _, edge_type, _ in edges)


async def _causal(session: AsyncSession, record: Mapping[Any, Any]) -> list[Edge]:
    owner, me, context = record["owner_id"], record["id"], record["context"]
    ids = _uuids(context.get(key) for key in ID_REFERENCES)
    events = _uuids(context.get(key) for key in EVENT_REFERENCES)
    sources = await repository.existing_ids(session, owner, ids + events) if ids or events else []
    if events:
        sources += await repository.breadcrumbs_of_events(session, owner, events)
    edges: list[Edge] = [(source, me, CAUSAL, 1.0) for source in dict.fromkeys(sources)]
    answers = [context["requestId"]] if isinstance(context.get("requestId"), str) else []
    asks = [
        request["requestId"]
        for request in context.get("tool_requests") or []
        if isinstance(request, dict) and isinstance(request.get("requestId"), str)
    ]
    if answers or asks:
        pairs = await repository.request_response_pairs(session, owner, me, answers, asks)
        edges += [(asker, answer, CAUSAL, 1.0) for asker, answer in pairs]
    return edges


async def _dependencies(
    session: AsyncSession, record: Mapping[Any, Any]
) -> tuple[list[Edge], list[Link]]:
    """Causal edges dependency → dependent, and the links to take back.

    A record that says its ``status`` is prior work only once that status is ``completed``
    (seed 003: a dependency's handoff counts when the task finished), so the dependency walk
    never brings an unfinished one; records without a status link as soon as they exist.
    Either end may come first: a dependent links the finished records it lists, and a record
    that finishes later links the dependents that listed it. One that stops being finished
    takes its links back, whichever of the two is rebuilt."""
    owner, me, context = record["owner_id"], record["id"], record["context"]
    linked: list[Edge] = []
    unlinked: list[Link] = []
    listed = _uuids(
        item
        for key in LIST_REFERENCES
        if isinstance(context.get(key), list)
        for item in context[key]
    )
    if listed:
        for dependency, finished in await repository.finished(session, owner, listed):
            if finished:
                linked.append((dependency, me, CAUSAL, 1.0))
            else:
                unlinked.append((dependency, me))
    status = context.get("status")
    # A record created unfinished has no links to take back; only later versions look.
    if isinstance(status, str) and (status == FINISHED or record["version"] > 1):
        dependents = await repository.dependents(session, owner, me, LIST_REFERENCES)
        if status == FINISHED:
            linked += [(me, dependent, CAUSAL, 1.0) for dependent in dependents]
        else:
            unlinked += [(me, dependent) for dependent in dependents]
    return linked, unlinked


async def _neighbouring(
    session: AsyncSession, record: Mapping[Any, Any], options: EdgeOptions
) -> list[Edge]:
    """Temporal, tag and semantic edges, their candidates asked in one statement."""
    me = record["id"]
    sessions = [tag for tag in record["tags"] if tag.startswith("session:")]
    found = await find_neighbours(
        session,
        record,
        sessions=sessions,
        pointers=tag_pointers(record["tags"]),
        tag_limit=options.tag_neighbours,
        k=options.semantic_neighbours if _has_embedding(record) else None,
    )
    return [
        *((previous, me, TEMPORAL, 1.0) for previous in found.previous if previous is not None),
        *((me, other, TAG, 1.0) for other in found.sharing),
        *(
            (me, other, SEMANTIC, similarity)
            for other, similarity in found.nearest
            if similarity >= options.semantic_min_similarity
        ),
    ]


def _has_embedding(record: Mapping[Any, Any]) -> bool:
    """A row read for its edges alone says so in ``has_embedding`` (the vector itself, 384
    floats to decode, is not needed: the semantic query reads it in the database)."""
    if "has_embedding" in record:
        return bool(record["has_embedding"])
    return record.get("embedding") is not None


def _uuids(values: Any) -> list[uuid.UUID]:
    found = []
    for value in values:
        if isinstance(value, str):
            try:
                found.append(uuid.UUID(value))
            except ValueError:
                continue
    return found
