"""How long ``GET /graph`` takes on a dense neighbourhood (not collected with the suite; run
it by name: ``pytest tests/edges/bench_graph_route.py -s``). 500 records in a fresh tenant,
each linked to ten others at random (5,000 edges); the median of 30 calls per depth at limit 500."""

from __future__ import annotations

import random
import statistics
import time
import uuid

import httpx
from fastapi import FastAPI
from tests.edges.test_graph_route import _link
from tests.factories import breadcrumb

RECORDS, LINKS, CALLS = 500, 10, 30


async def test_graph_route_latency(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    ids: list[uuid.UUID] = []
    for start in range(0, RECORDS, 250):
        records = [breadcrumb(title=f"bench {n}", tags=[]) for n in range(start, start + 250)]
        answer = await client.post("/breadcrumbs/batch", json={"records": records})
        ids += [uuid.UUID(result["id"]) for result in answer.json()["results"]]
    pick = random.Random(19)
    edges = [(a, b, 3, 0.7) for a in ids for b in pick.sample(ids, LINKS) if a != b]
    await _link(app, tenant, edges)
    hub = ids[RECORDS // 2]
    for depth in (1, 2, 3):
        took = []
        for _ in range(CALLS):
            started = time.perf_counter()
            response = await client.get(
                "/graph", params={"around": str(hub), "depth": depth, "limit": 500}
            )
            took.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        body = response.json()
        print(
            f"depth {depth}: {len(body['nodes'])} nodes, {len(body['edges'])} edges, "
            f"median {statistics.median(took):.1f} ms, max {max(took):.1f} ms"
        )
