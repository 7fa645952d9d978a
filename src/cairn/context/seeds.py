"""Seeds: where the search starts, each remembering its source and score.

- ``always``: every ``context_sources.always`` entry of the agent in ONE batched query;
- ``session``: the newest records of the trigger's session (score = recency);
- ``semantic``: hybrid search — cosine similarity to the trigger's embedding fused with the
  overlap of keyword pointers — restricted to the agent's schemas (a real filter) and, with
  ``scope: session``, to the trigger's session. Filtered searches rank the filtered subset
  exactly (pgvector would post-filter an HNSW scan and silently return fewer rows).

The blacklist applies to every source.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import AlwaysSource, SemanticSource
from cairn.context.model import Record, Seed, SeedSource
from cairn.context.records import COLUMNS, LIVE, to_record

NOT_EXCLUDED = "(schema_name IS NULL OR NOT (schema_name = ANY(:excluded)))"
# Fusion of the two signals for semantic seeds: cosine similarity plus a bonus for shared
# keyword pointers. A bonus rather than a weighted mean, so that `min_similarity` keeps its
# meaning for records that share nothing, while shared entities can lift a moderately
# similar record over it. (RCRT's thresholds, ~0.75, were set on its pad-token-inflated
# cosines; correctly pooled MiniLM puts a clearly relevant document near 0.6.)
KEYWORD_BONUS = 0.25
KEYWORD_SATURATION = 4  # this many shared pointers earn the whole bonus


@dataclass(frozen=True, slots=True)
class SeedBatch:
    seeds: list[Seed]
    records: dict[uuid.UUID, Record]
    below_threshold: list[tuple[uuid.UUID, float]]


async def always_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    sources: Sequence[AlwaysSource],
    excluded: frozenset[str],
    trigger_id: uuid.UUID | None = None,
) -> SeedBatch:
    """Every source in one query. Each seed's score is its similarity to the trigger, so
    when the budget cannot hold them all, the most relevant go first."""
    if not sources:
        return SeedBatch([], {}, [])
    parts: list[str] = []
    params: dict[str, Any] = {
        "owner": owner_id,
        "excluded": sorted(excluded),
        "trigger": trigger_id,
    }
    for index, source in enumerate(sources):
        clauses = ["owner_id = :owner", LIVE, NOT_EXCLUDED]
        if source.schema_name:
            clauses.append(f"schema_name = :schema_{index}")
            params[f"schema_{index}"] = source.schema_name
        if source.tag:
            clauses.append(f"tags @> ARRAY[CAST(:tag_{index} AS text)]")
            params[f"tag_{index}"] = source.tag
        limit = 1 if source.method == "latest" else source.limit
        parts.append(
            f"(SELECT {index} AS source_index, {COLUMNS}, embedding FROM breadcrumbs"
            f" WHERE {' AND '.join(clauses)} ORDER BY updated_at DESC, id DESC LIMIT {limit:d})"
        )
    query = (
        "SELECT chosen.*, 1 - (chosen.embedding <=> probe.embedding) AS similarity"
        f" FROM ({' UNION ALL '.join(parts)}) AS chosen"
        " LEFT JOIN breadcrumbs probe ON probe.id = CAST(:trigger AS uuid)"
    )
    rows = (await session.execute(text(query), params)).mappings().all()
    seeds, records = [], {}
    # Within a source: most similar to the trigger first, then newest (the query's order).
    ranked = sorted(
        enumerate(rows), key=lambda p: (p[1]["source_index"], -(p[1]["similarity"] or 0), p[0])
    )
    for _, row in ranked:
        source = sources[row["source_index"]]
        records[row["id"]] = to_record(row)
        label = source.schema_name or source.tag or ""
        score = 1.0 if row["similarity"] is None else min(1.0, max(0.0, row["similarity"]))
        detail = f"{source.kind}:{label} ({source.method})"
        seeds.append(Seed(row["id"], SeedSource.always, score, detail))
    return SeedBatch(seeds, records, [])


async def session_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    session_tags: Sequence[str],
    limit: int,
    excluded: frozenset[str],
    trigger_id: uuid.UUID,
) -> SeedBatch:
    if not session_tags or limit <= 0:
        return SeedBatch([], {}, [])
    # Only what came before the trigger: a slow assembly must not show later turns.
    query = text(
        f"SELECT {COLUMNS} FROM breadcrumbs WHERE owner_id = :owner AND tags && :tags"
        f" AND id <> :trigger AND {LIVE} AND {NOT_EXCLUDED}"
        " AND created_at <= (SELECT created_at FROM breadcrumbs WHERE id = :trigger)"
        " ORDER BY created_at DESC, id DESC LIMIT :limit"
    )
    params = {
        "owner": owner_id, "tags": list(session_tags), "trigger": trigger_id,
        "limit": limit, "excluded": sorted(excluded),
    }  # fmt: skip
    rows = (await session.execute(query, params)).mappings().all()
    seeds = [
        Seed(
            row["id"],
            SeedSource.session,
            1.0 - rank / max(1, len(rows)),
            f"session rank {rank + 1}",
        )
        for rank, row in enumerate(rows)
    ]
    return SeedBatch(seeds, {row["id"]: to_record(row) for row in rows}, [])


async def semantic_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    trigger_id: uuid.UUID,
    source: SemanticSource,
    pointers: Sequence[str],
    session_tags: Sequence[str],
    excluded: frozenset[str],
) -> SeedBatch:
    """Hybrid search around the trigger; ``below_threshold`` lists near misses."""
    if not source.enabled:
        return SeedBatch([], {}, [])
    rows = await _hybrid_candidates(
        session, owner_id, trigger_id, source, pointers, session_tags, excluded
    )
    seeds: list[Seed] = []
    records: dict[uuid.UUID, Record] = {}
    below: list[tuple[uuid.UUID, float]] = []
    for row in rows:
        score = _fused(row["similarity"], row["shared"], len(pointers))
        if score < source.min_similarity:
            below.append((row["id"], round(score, 4)))
            continue
        if len(seeds) < source.limit:
            detail = f"similarity {row['similarity']:.3f}, {row['shared']} shared keywords"
            seeds.append(Seed(row["id"], SeedSource.semantic, min(1.0, score), detail))
            records[row["id"]] = to_record(row)
    return SeedBatch(seeds, records, below)


def _fused(similarity: float | None, shared: int, pointer_count: int) -> float:
    keyword = min(shared, KEYWORD_SATURATION) / max(1, min(KEYWORD_SATURATION, pointer_count))
    return min(1.0, max(0.0, similarity or 0.0) + KEYWORD_BONUS * keyword)


async def _hybrid_candidates(
    session: AsyncSession,
    owner_id: uuid.UUID,
    trigger_id: uuid.UUID,
    source: SemanticSource,
    pointers: Sequence[str],
    session_tags: Sequence[str],
    excluded: frozenset[str],
) -> list[Any]:
    """Vector neighbours and keyword matches of the filtered subset, ranked exactly."""
    clauses = ["owner_id = :owner", "id <> :trigger", LIVE, NOT_EXCLUDED]
    params: dict[str, Any] = {
        "owner": owner_id, "trigger": trigger_id, "excluded": sorted(excluded),
        "pointers": list(pointers), "pool": max(50, 4 * source.limit),
    }  # fmt: skip
    if source.schemas:
        clauses.append("schema_name = ANY(:schemas)")
        params["schemas"] = list(source.schemas)
    if source.scope == "session":
        if not session_tags:
            return []
        clauses.append("tags && :session_tags")
        params["session_tags"] = list(session_tags)
    query = text(
        f"""
        WITH probe AS (SELECT embedding FROM breadcrumbs WHERE id = :trigger),
        subset AS MATERIALIZED (
            SELECT {COLUMNS}, embedding, entity_keywords FROM breadcrumbs
            WHERE {" AND ".join(clauses)}
        ),
        scored AS (
            SELECT subset.*,
                   1 - (subset.embedding <=> (SELECT embedding FROM probe)) AS similarity,
                   cardinality(ARRAY(SELECT unnest(subset.entity_keywords)
                                     INTERSECT SELECT unnest(CAST(:pointers AS text[])))) AS shared
            FROM subset
        ),
        by_vector AS (SELECT id FROM scored WHERE similarity IS NOT NULL
                      ORDER BY similarity DESC, id LIMIT :pool),
        by_keyword AS (SELECT id FROM scored WHERE shared > 0
                       ORDER BY shared DESC, similarity DESC NULLS LAST, id LIMIT :pool)
        SELECT {COLUMNS}, similarity, shared FROM scored
        WHERE id IN (SELECT id FROM by_vector UNION SELECT id FROM by_keyword)
        """
    )
    rows = (await session.execute(query, params)).mappings().all()
    return sorted(
        rows,
        key=lambda r: (-_fused(r["similarity"], r["shared"], len(pointers)), str(r["id"])),
    )
