"""Search latency with short records only: what chunk scoring costs where no record is long.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/chunk_search_speed.py [--records 3000]

An in-process app (the real ONNX embedder) on fresh embedded PostgreSQL and NATS; the turns
of the LoCoMo dev conversations are stored as records (a few thousand, none longer than the
encoder's window), then each search is timed over ``--queries`` questions:
``mode=vector`` unfiltered (HNSW) and filtered by a tag (exact), and ``mode=hybrid``.
Run it once on a commit before chunks and once after to compare.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "quality"))

from client import PLAIN_TURN_SCHEMA, CairnClient, turn_body  # noqa: E402
from dataset import load_conversation  # noqa: E402
from inprocess import leave, run, served_app  # noqa: E402
from tests.fixtures_path import FIXTURES  # noqa: E402


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


async def _timed(http: httpx.AsyncClient, params: dict[str, str]) -> float:
    started = time.perf_counter()
    response = await http.get("/breadcrumbs/search", params=params)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


async def measure(http: httpx.AsyncClient, records: int, queries: int) -> dict[str, Any]:
    questions = (await _store(http, records))[:queries]
    vectors = []
    for q in questions:  # the question's vector, so vector timings exclude the encoder
        found = await http.get("/breadcrumbs/search", params={"q": q, "nn": "1"})
        full = await http.get(f"/breadcrumbs/{found.json()[0]['id']}/full")
        vectors.append(json.dumps(full.json()["embedding"]))
    cases = {
        "vector": [{"qvec": v, "nn": "10"} for v in vectors],
        "vector, tag filter": [{"qvec": v, "nn": "10", "tag": "session:26"} for v in vectors],
        "hybrid": [{"q": q, "nn": "10", "mode": "hybrid"} for q in questions],
    }
    out: dict[str, Any] = {"records": records, "queries": len(questions)}
    for name, runs in cases.items():
        times = [await _timed(http, params) for params in runs]
        out[name] = {
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(statistics.quantiles(times, n=20)[-1], 2),
        }
    return out


async def main(records: int, queries: int) -> dict[str, Any]:
    async with served_app() as http:
        return await measure(http, records, queries)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(json.dumps(run(lambda: main(args.records, args.queries)), indent=2))
    leave()
