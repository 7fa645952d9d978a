"""On-demand context (``POST /contexts/query``): latency of a cache miss and of a hit.

    .venv/bin/python benchmarks/ondemand.py [--queries 50] [--hits 20]

An in-process app (httpx over ASGI, the real ONNX embedder) on a fresh embedded
PostgreSQL and NATS. One LoCoMo dev conversation is loaded as records of one session and an
agent with semantic and session sources is defined; then each of ``--queries`` questions is
asked once with ``Cache-Control: no-cache`` (a miss: embed, assemble) and ``--hits`` times
without (the first stores the answer, the rest are hits). Results go to
benchmarks/results/ondemand.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "quality"))

from client import TURN_SCHEMA, CairnClient, turn_body  # noqa: E402
from dataset import load_conversation  # noqa: E402
from tests.fixtures_path import FIXTURES  # noqa: E402

from cairn.api.app import create_app  # noqa: E402
from cairn.config import EmbeddingSettings, Settings  # noqa: E402
from cairn.db.roles import DEFAULT_APP_ROLE  # noqa: E402
from cairn.runtime import EmbeddedNats, EmbeddedPostgres  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
MODELS = Path(os.environ.get("CAIRN_TEST_MODEL_DIR", REPO / ".cairn" / "models"))
CONVERSATION = FIXTURES / "locomo-dev" / "30.json"
SESSION = "bench"
AGENT = {
    "agent_id": "bench-reader",
    "context_trigger": {"schema_name": "bench.never.v1"},
    "context_sources": {
        "semantic": {"enabled": True, "schemas": [TURN_SCHEMA], "limit": 50, "scope": "session"},
        "session": {"limit": 5},
    },
    "context_budget": 2000,
}


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 3)

    return {"p50": at(0.5), "p99": at(0.99), "n": len(ordered)}


async def timed(
    http: httpx.AsyncClient, body: dict[str, object], **headers: str
) -> tuple[float, bool]:
    started = time.perf_counter()
    response = await http.post("/contexts/query", json=body, headers=headers)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed, bool(response.json()["cache_hit"])


async def measure(http: httpx.AsyncClient, queries: int, hits: int) -> dict[str, object]:
    conversation = load_conversation(CONVERSATION)
    cairn = CairnClient(http)
    await cairn.create(
        {"schema_name": "agent.def.v1", "title": "bench", "tags": [], "context": AGENT}
    )
    for turn in conversation.turns:
        await cairn.create(turn_body(turn, f"session:{SESSION}"))
    await asyncio.sleep(6.0)  # the last write settles (CAIRN_CONTEXT__QUERY_CACHE_SETTLE_S)
    misses: list[float] = []
    cached: list[float] = []
    for question in conversation.questions[:queries]:
        body = {"query": question.text, "agent_id": AGENT["agent_id"], "session": SESSION}
        misses.append((await timed(http, body, **{"Cache-Control": "no-cache"}))[0])
        await timed(http, body)  # stores the answer
        for _ in range(hits):
            elapsed, hit = await timed(http, body)
            assert hit, "expected a cache hit"
            cached.append(elapsed)
    return {
        "records": len(conversation.turns),
        "miss_ms": percentiles(misses),
        "hit_ms": percentiles(cached),
    }


@asynccontextmanager
async def served_app() -> AsyncIterator[httpx.AsyncClient]:
    """A client of an in-process app on fresh embedded PostgreSQL and NATS."""
    root = Path(tempfile.mkdtemp(prefix="cairn-ondemand-"))
    postgres, nats = EmbeddedPostgres(root / "pg", fast=True), EmbeddedNats(root / "nats")
    postgres.start()
    nats.start()
    try:
        settings = Settings(
            data_dir=root / "data", admin_database_url=postgres.url,
            database_url=postgres.url_for(DEFAULT_APP_ROLE), nats_url=nats.url,
            embedding=EmbeddingSettings(model_dir=MODELS),
        )  # fmt: skip
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            await asyncio.wait_for(app.state.resources.nats.ready.wait(), 30)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
                yield http
    finally:
        nats.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


async def main(queries: int, hits: int) -> dict[str, object]:
    async with served_app() as http:
        return await measure(http, queries, hits)


def write(results: dict[str, object]) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ondemand.json").write_text(json.dumps(results, indent=2) + "\n")
    miss, hit = results["miss_ms"], results["hit_ms"]
    assert isinstance(miss, dict) and isinstance(hit, dict)
    lines = [
        "# On-demand context latency (POST /contexts/query, in-process HTTP)",
        "",
        f"{results['records']} records in one session; agent: semantic (session scope) + session.",
        "",
        "| | p50 ms | p99 ms | n |",
        "|---|---:|---:|---:|",
        f"| miss (Cache-Control: no-cache) | {miss['p50']} | {miss['p99']} | {miss['n']} |",
        f"| hit | {hit['p50']} | {hit['p99']} | {hit['n']} |",
        "",
    ]
    (RESULTS / "ondemand.md").write_text("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--hits", type=int, default=20)
    args = parser.parse_args()
    outcome = asyncio.run(main(args.queries, args.hits))
    write(outcome)
    print(json.dumps(outcome, indent=2))
