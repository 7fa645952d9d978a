"""``context_sources.always``: records the agent always wants (its tools, its settings),
every entry in ONE batched query. Each seed's score is its similarity to the trigger, so
when the budget cannot hold them all, the most relevant go first."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import AlwaysSource
from cairn.context.model import Seed
from cairn.context.records import LIVE, NOT_EXCLUDED
from cairn.context.sources.base import (
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    run_alone,
)
from cairn.context.trigger import Probe, as_probe

NAME = "always"


class Always:
    name = NAME
    # The relevant ones go first when the budget cannot hold them all.
    cost = SeedCost(base=0.05, span=0.5)

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        return always_query(
            request.owner_id, request.agent.always, request.excluded, request.trigger.probe
        )

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return await always_seeds(
            request.session, request.owner_id, request.agent.always, request.excluded,
            request.trigger.probe,
        )  # fmt: skip


SOURCE = Always()


async def always_seeds(
    session: AsyncSession,
    owner_id: uuid.UUID,
    sources: Sequence[AlwaysSource],
    excluded: frozenset[str],
    trigger: uuid.UUID | Probe | None = None,
) -> SeedBatch:
    return await run_alone(session, always_query(owner_id, sources, excluded, trigger))


def always_query(
    owner_id: uuid.UUID,
    sources: Sequence[AlwaysSource],
    excluded: frozenset[str],
    trigger: uuid.UUID | Probe | None = None,
) -> SeedQuery | SeedBatch:
    if not sources:
        return SeedBatch([])
    probe = as_probe(trigger)
    parts: list[str] = []
    params: dict[str, Any] = {
        "owner": owner_id,
        "excluded": sorted(excluded),
        **probe.params(),
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
            f"(SELECT {index} AS source_index, id, embedding FROM breadcrumbs"
            f" WHERE {' AND '.join(clauses)} ORDER BY updated_at DESC, id DESC LIMIT {limit:d})"
        )
    query = (  # the vectors stay in the database: only the similarity comes back
        "SELECT chosen.source_index, chosen.id,"
        " 1 - (chosen.embedding <=> probe.embedding) AS similarity"
        f" FROM ({' UNION ALL '.join(parts)}) AS chosen {probe.join_sql()}"
    )
    return SeedQuery(query, params, lambda rows: _read(sources, rows))


def _read(sources: Sequence[AlwaysSource], rows: Rows) -> SeedBatch:
    seeds = []
    # Within a source: most similar to the trigger first, then newest (the query's order).
    ranked = sorted(
        enumerate(rows), key=lambda p: (p[1]["source_index"], -(p[1]["similarity"] or 0), p[0])
    )
    for _, row in ranked:
        source = sources[row["source_index"]]
        label = source.schema_name or source.tag or ""
        score = 1.0 if row["similarity"] is None else min(1.0, max(0.0, row["similarity"]))
        detail = f"{source.kind}:{label} ({source.method})"
        seeds.append(Seed(row["id"], NAME, score, detail))
    return SeedBatch(seeds)
