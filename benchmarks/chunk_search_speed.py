"""What chunk scoring costs a vector search where no record is long: the search as it was
before chunks against the search of ``breadcrumbs.repository``, on the same data, alternated.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/chunk_search_speed.py [--records 3000]

An in-process app (the real ONNX embedder) on fresh embedded PostgreSQL and NATS; the turns
of the LoCoMo dev conversations are stored as records (none longer than the encoder's
window, so there are no chunks), then each question's vector is searched (``nn=10``)
unfiltered (HNSW) and filtered by a tag (exact), once by each query, in alternation so that
both see the same load. Times are of the database round trip in the API process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "quality"))

from client import PLAIN_TURN_SCHEMA, CairnClient, turn_body  # noqa: E402
from dataset import load_conversation  # noqa: E402
from inprocess import leave, run, served  # noqa: E402
from tests.fixtures_path import FIXTURES  # noqa: E402

from cairn.breadcrumbs import vector_search  # noqa: E402
from cairn.breadcrumbs.repository import LIST_COLUMNS, ListFilter, filter_clauses  # noqa: E402
from cairn.db.engine import tenant_session  # noqa: E402
from cairn.db.models import breadcrumbs  # noqa: E402

Search = Callable[[AsyncSession, uuid.UUID, Sequence[float], ListFilter], Awaitable[Any]]


async def before_chunks(
    session: AsyncSession, owner: uuid.UUID, vector: Sequence[float], flt: ListFilter
) -> Any:
    """``search_vector`` as it was before chunks (the record's own vector alone)."""
    distance = breadcrumbs.c.embedding.cosine_distance(list(vector))
    clauses = [*filter_clauses(owner, flt), breadcrumbs.c.embedding.is_not(None)]
    columns = [*breadcrumbs.c[LIST_COLUMNS], (1 - distance).label("score")]
    if flt != ListFilter():
        candidates = select(*columns, distance.label("distance")).where(*clauses).cte()
        candidates = candidates.prefix_with("MATERIALIZED")
        query = select(candidates).order_by(candidates.c.distance, candidates.c.id).limit(10)
    else:
        await session.execute(text("SET LOCAL hnsw.ef_search = 40"))
        query = select(*columns).where(*clauses).order_by(distance).limit(10)
    return (await session.execute(query)).mappings().all()


async def with_chunks(
    session: AsyncSession, owner: uuid.UUID, vector: Sequence[float], flt: ListFilter
) -> Any:
    return await vector_search.search_vector(session, owner, vector, flt, nn=10)


async def _store(http: httpx.AsyncClient, records: int) -> list[str]:
    cairn, questions = CairnClient(http), []
    stored = 0
    for path in sorted((FIXTURES / "locomo-dev").glob("*.json")):
        conversation = load_conversation(path)
        questions += [q.text for q in conversation.questions]
        for turn in conversation.turns:
            if stored >= records:
                return questions
            await cairn.create(turn_body(turn, f"session:{path.stem}", PLAIN_TURN_SCHEMA))
            stored += 1
    return questions


async def _timed(app: FastAPI, search: Search, vector: list[float], flt: ListFilter) -> float:
    resources = app.state.resources
    owner = uuid.UUID(resources.settings.default_tenant_id)
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        started = time.perf_counter()
        await search(session, owner, vector, flt)
        return (time.perf_counter() - started) * 1000


async def measure(http: httpx.AsyncClient, app: FastAPI, records: int, queries: int) -> Any:
    questions = (await _store(http, records))[:queries]
    embedder = app.state.resources.embedder
    vectors = await embedder.embed(questions)
    out: dict[str, Any] = {"records": records, "queries": len(questions)}
    for name, flt in (("unfiltered", ListFilter()), ("tag filter", ListFilter(tag="session:26"))):
        times: dict[str, list[float]] = {"before chunks": [], "with chunks": []}
        for vector in vectors:
            times["before chunks"].append(await _timed(app, before_chunks, vector, flt))
            times["with chunks"].append(await _timed(app, with_chunks, vector, flt))
        out[name] = {
            variant: {"p50_ms": round(statistics.median(t), 2),
                      "p95_ms": round(statistics.quantiles(t, n=20)[-1], 2)}
            for variant, t in times.items()
        }  # fmt: skip
    return out


async def main(records: int, queries: int) -> Any:
    async with served() as (http, app):
        return await measure(http, app, records, queries)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(run(lambda: main(args.records, args.queries)), indent=2))
    leave()
