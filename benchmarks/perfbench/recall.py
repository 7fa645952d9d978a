"""Search recall@10 against exact search, on real embeddings, with the latency it costs.

- ``hnsw``: the unfiltered top-10 as ``GET /breadcrumbs/search`` and the edge builder run
  it (HNSW, ``hnsw.ef_search = 40``), and at ``ef_search = 100`` for comparison;
- ``semantic_source``: the vector half of the context builder's semantic source (schema
  filter ``knowledge.v1``/``note.v1``) as it ranks a small subset: exactly;
- ``semantic_near``: the same through the partial HNSW index of those schemas, as the source
  searches a large subset (``cairn.context.sources.nearest``).

Exact neighbours come from numpy over the same vectors. A returned record counts as a hit
when its similarity reaches the 10th exact similarity (ties between records that share a
text would otherwise count as misses).
"""

from __future__ import annotations

import random
import time
from typing import Any

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

from cairn.context.sources import nearest

from .corpus import Corpus
from .measure import summary

SEMANTIC_SCHEMAS = ["knowledge.v1", "note.v1"]
K = 10


async def measure_recall(corpus: Corpus, dsn: str, queries: int = 200) -> dict[str, Any]:
    rng = random.Random(11)
    picks = rng.sample(corpus.triggers, min(queries, len(corpus.triggers)))
    probes = [corpus.vector_of(corpus.rows[i]) for i in picks]
    matrix = np.stack([corpus.vector_of(row) for row in corpus.rows])
    filtered = np.array([row["schema_name"] in SEMANTIC_SCHEMAS for row in corpus.rows])
    connection = await asyncpg.connect(dsn)
    await register_vector(connection)
    try:
        out: dict[str, Any] = {"queries": len(probes)}
        for ef in (40, 100):
            out[f"hnsw_ef{ef}"] = await _run(
                connection, probes, matrix, None, ef=ef, unfiltered=True
            )
        out["semantic_source"] = await _run(connection, probes, matrix, filtered, ef=40)
        out["semantic_near"] = await _run(
            connection, probes, matrix, filtered, ef=nearest.ef_search(50), near=True
        )
    finally:
        await connection.close()
    return out


async def _run(
    connection: asyncpg.Connection,
    probes: list[Any],
    matrix: np.ndarray,
    mask: np.ndarray | None,
    *,
    ef: int,
    unfiltered: bool = False,
    near: bool = False,
) -> dict[str, Any]:
    recalls, latencies = [], []
    for probe in probes:
        sims = matrix @ probe
        if mask is not None:
            sims = np.where(mask, sims, -2.0)
        threshold = float(np.sort(sims)[-K]) - 1e-5
        async with connection.transaction():
            await connection.execute(f"SET LOCAL hnsw.ef_search = {ef:d}")
            started = time.perf_counter()
            if unfiltered:
                rows = await connection.fetch(
                    "SELECT 1 - (embedding <=> $1) AS similarity FROM breadcrumbs"
                    " WHERE embedding IS NOT NULL ORDER BY embedding <=> $1 LIMIT $2",
                    probe,
                    K,
                )
            elif near:
                rows = await connection.fetch(
                    "SELECT 1 - (embedding <=> $1) AS similarity FROM breadcrumbs"
                    f" WHERE schema_name = ANY({nearest.schema_list(SEMANTIC_SCHEMAS)})"
                    " ORDER BY embedding <=> $1 LIMIT $2",
                    probe,
                    K,
                )
            else:
                rows = await connection.fetch(
                    "WITH subset AS MATERIALIZED (SELECT id, embedding FROM breadcrumbs"
                    " WHERE schema_name = ANY($2::text[]) AND embedding IS NOT NULL)"
                    " SELECT 1 - (embedding <=> $1) AS similarity FROM subset"
                    " ORDER BY embedding <=> $1, id LIMIT $3",
                    probe,
                    SEMANTIC_SCHEMAS,
                    K,
                )
            latencies.append((time.perf_counter() - started) * 1000)
        hits = sum(1 for row in rows if row["similarity"] >= threshold)
        recalls.append(hits / K)
    return {
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "ef_search": ef if unfiltered or near else None,
        "latency_ms": summary(latencies),
    }
