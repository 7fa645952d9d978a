"""The graph phase walked in memory against the SQL walk, interleaved on the same corpus.

    .venv/bin/python benchmarks/perf_graph.py --scale 10000 --triggers 300 --name graphmem

Loads the perf corpus (cached in `.cairn-bench/`) into a fresh embedded PostgreSQL, then
runs every trigger through two context builders in the same process — one walking each
tenant's graph in memory (context.graph_memory), one by SQL — alternating which goes
first. Reports the graph phase and the whole assembly (trigger to commit) for both, whether
the two wrote the same context and explanation, and what the adjacency costs in memory.
Writes benchmarks/results/NAME.json and NAME.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from perf import CACHE, RESULTS, trigger_events  # noqa: E402
from perfbench import corpus as corpus_module, load, server  # noqa: E402

from cairn.config import Settings  # noqa: E402
from cairn.context.builder import ContextBuilder  # noqa: E402
from cairn.context.graph_memory import GraphMemory  # noqa: E402
from cairn.db.engine import create_engine, create_session_factory, tenant_session  # noqa: E402
from cairn.runtime.heap import tune_collector  # noqa: E402
from cairn.transforms import Transforms  # noqa: E402
from cairn.worker.app import NoEmbedder  # noqa: E402


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": round(statistics.median(ordered), 2), "p95": round(at(0.95), 2),
            "p99": round(at(0.99), 2), "n": len(ordered)}  # fmt: skip


async def _build(builder: ContextBuilder, event: dict[str, Any]) -> tuple[float, float, Any]:
    owner = uuid.UUID(event["owner_id"])
    agents = [a for a in await builder.directory.agents(owner) if a.triggered_by(event)]
    started = time.perf_counter()
    graph = 0.0
    rows = []
    for agent in agents:
        row = await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])
        assert row is not None
        graph += row["context"]["timings_ms"].get("graph", 0.0)
        rows.append((row["context"]["formatted_context"], row["context"]["explain"]))
    return graph, (time.perf_counter() - started) * 1000, rows


async def measure(args: argparse.Namespace, corpus: Any, database_url: str) -> dict[str, Any]:
    settings = Settings(database_url=database_url, data_dir=CACHE / "data")
    engine = create_engine(database_url, settings)
    sessions = create_session_factory(engine)
    make = lambda: ContextBuilder.create(  # noqa: E731
        settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    in_memory, by_sql = make(), make()
    memory = in_memory.graphs = GraphMemory()
    rss_before = server.rss_mb(os.getpid())
    started = time.perf_counter()
    async with tenant_session(sessions, corpus_module.OWNER) as session, session.begin():
        adjacency = await memory.current(session, corpus_module.OWNER)
    load_ms = (time.perf_counter() - started) * 1000
    rss_after = server.rss_mb(os.getpid())
    tune_collector()
    events = trigger_events(corpus, args.triggers + args.warmup)
    samples: dict[str, dict[str, list[float]]] = {
        name: {"graph": [], "assembly": []} for name in ("memory", "sql")
    }
    differ = 0
    for n, event in enumerate(events):
        pair = [("memory", in_memory), ("sql", by_sql)]
        if n % 2:
            pair.reverse()
        outputs = {}
        for name, builder in pair:
            graph, total, rows = await _build(builder, {**event, "event_id": str(uuid.uuid4())})
            outputs[name] = [(text, _stable(explain)) for text, explain in rows]
            if n >= args.warmup:
                samples[name]["graph"].append(graph)
                samples[name]["assembly"].append(total)
        differ += outputs["memory"] != outputs["sql"]
    await engine.dispose()
    edges = adjacency.edge_count
    return {
        "triggers": args.triggers,
        "graph_ms": {name: _percentiles(s["graph"]) for name, s in samples.items()},
        "assembly_ms": {name: _percentiles(s["assembly"]) for name, s in samples.items()},
        "outputs_differ": differ,
        "adjacency": {
            "records": adjacency.size,
            "edges": edges,
            "array_bytes": adjacency.nbytes,
            "load_ms": round(load_ms, 1),
            "rss_before_mb": rss_before,
            "rss_after_mb": rss_after,
            "rss_bytes_per_edge": round((rss_after - rss_before) * 2**20 / max(1, edges), 1),
        },
    }


def _stable(explain: dict[str, Any]) -> str:
    """The explanation without what differs between two runs of one assembly anyway."""
    return json.dumps(explain, sort_keys=True, default=str)


def markdown(result: dict[str, Any]) -> str:
    a = result["adjacency"]
    lines = [
        f"### {result['name']}: graph phase in memory vs SQL, {a['records']:,} records,"
        f" {a['edges']:,} edges",
        "",
        f"{result['triggers']} triggers, each through both builders in the same process,"
        " alternating which goes first; milliseconds.",
        "",
        "| walk | graph p50 | p95 | p99 | assembly p50 | p95 | p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ("sql", "memory"):
        g, t = result["graph_ms"][name], result["assembly_ms"][name]
        lines.append(
            f"| {name} | {g['p50']} | {g['p95']} | {g['p99']} | {t['p50']} | {t['p95']} |"
            f" {t['p99']} |"
        )
    lines += [
        "",
        f"Contexts or explanations that differ between the two: **{result['outputs_differ']}**.",
        f"Adjacency: {a['array_bytes'] / 1e6:.2f} MB of arrays, loaded in {a['load_ms']} ms;"
        f" RSS {a['rss_before_mb']} → {a['rss_after_mb']} MB"
        f" ({a['rss_bytes_per_edge']} bytes per edge, ids and dictionary included).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--triggers", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--unique-texts", type=int, default=10_000)
    parser.add_argument("--name", default="graphmem")
    args = parser.parse_args()
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    corpus = corpus_module.load_or_build(
        args.scale, CACHE, REPO / ".cairn" / "models", unique_texts=args.unique_texts
    )
    with load.services(CACHE / f"run-{args.name}") as services:
        print("loading (COPY, then HNSW)", flush=True)
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        result = {"name": args.name, "scale": args.scale}
        result |= asyncio.run(measure(args, corpus, services.database_url))
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
