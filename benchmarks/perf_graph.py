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
import random
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
from cairn.context import graph as graph_module  # noqa: E402
from cairn.context.builder import ContextBuilder  # noqa: E402
from cairn.context.graph_memory import GraphMemory  # noqa: E402
from cairn.db.engine import create_engine, create_session_factory, tenant_session  # noqa: E402
from cairn.runtime.heap import tune_collector  # noqa: E402
from cairn.transforms import Transforms  # noqa: E402
from cairn.worker.app import NoEmbedder  # noqa: E402

_PARTS: dict[str, float] = {}


def _timed(name: str, function: Any) -> Any:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            _PARTS[name] = _PARTS.get(name, 0.0) + (time.perf_counter() - started) * 1000

    return wrapper


def instrument() -> None:
    """Split the graph phase: the walk's hops, the records, the memory's catch-up."""
    graph_module.load_records_cached = _timed("records", graph_module.load_records_cached)
    walk = graph_module._RankedWalk
    walk.hop = _timed("hops", walk.hop)  # type: ignore[method-assign]
    GraphMemory.current = _timed("catch_up", GraphMemory.current)  # type: ignore[method-assign]


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
    assert adjacency is not None
    load_ms = (time.perf_counter() - started) * 1000
    rss_after = server.rss_mb(os.getpid())
    tune_collector()
    instrument()
    events = trigger_events(corpus, args.triggers + args.warmup)
    samples: dict[str, dict[str, list[float]]] = {
        name: {"graph": [], "assembly": [], "hops": [], "records": [], "catch_up": []}
        for name in ("memory", "sql")
    }
    differ = 0
    for n, event in enumerate(events):
        pair = [("memory", in_memory), ("sql", by_sql)]
        if n % 2:
            pair.reverse()
        outputs = {}
        for name, builder in pair:
            _PARTS.clear()
            graph, total, rows = await _build(builder, {**event, "event_id": str(uuid.uuid4())})
            outputs[name] = [(text, _stable(explain)) for text, explain in rows]
            if n >= args.warmup:
                samples[name]["graph"].append(graph)
                samples[name]["assembly"].append(total)
                for part in ("hops", "records", "catch_up"):
                    samples[name][part].append(_PARTS.get(part, 0.0))
        differ += outputs["memory"] != outputs["sql"]
    await engine.dispose()
    edges = adjacency.edge_count
    cut, longer = adjacency.cut_ties(settings.context.fanout)
    return {
        "triggers": args.triggers,
        "graph_ms": {name: _percentiles(s["graph"]) for name, s in samples.items()},
        "assembly_ms": {name: _percentiles(s["assembly"]) for name, s in samples.items()},
        "graph_parts_ms": {
            name: {part: _percentiles(s[part]) for part in ("hops", "records", "catch_up")}
            for name, s in samples.items()
        },
        "outputs_differ": differ,
        "fanout_ties": {"lists_longer_than_fanout": longer, "cut_inside_a_tie": cut},
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


_UPSERT_ONE = (
    "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
    " SELECT $1, f, t, k, w FROM unnest($2::uuid[], $3::uuid[], $4::smallint[], $5::real[])"
    " AS e(f, t, k, w)"
    " ON CONFLICT (from_id, to_id, edge_type) DO UPDATE SET weight = EXCLUDED.weight"
)
_UPSERT = (
    "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
    " VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (from_id, to_id, edge_type) DO UPDATE SET weight = EXCLUDED.weight"
)


async def edge_write_cost(dsn: str, reps: int = 100, per_write: int = 10) -> dict[str, Any]:
    """One record's edge writes (``per_write`` upserts in a transaction, as the edge builder
    does) with the change-log triggers on and off, one statement per edge or one for all,
    alternating; milliseconds."""
    import asyncpg

    rng = random.Random(20)
    connection = await asyncpg.connect(dsn)
    times: dict[str, list[float]] = {
        f"{way}_triggers_{state}": [] for way in ("each", "one") for state in ("on", "off")
    }
    try:
        ids = [r[0] for r in await connection.fetch(
            "SELECT id FROM breadcrumbs WHERE owner_id = $1 LIMIT 5000", corpus_module.OWNER
        )]  # fmt: skip
        for rep in range(reps):
            for on in (True, False) if rep % 2 else (False, True):
                state = "ENABLE" if on else "DISABLE"
                await connection.execute(f"ALTER TABLE breadcrumb_edges {state} TRIGGER USER")
                rows = [
                    (corpus_module.OWNER, rng.choice(ids), rng.choice(ids), 2, 1.0)
                    for _ in range(per_write)
                ]
                for way in ("each", "one") if rep % 3 else ("one", "each"):
                    started = time.perf_counter()
                    async with connection.transaction():
                        if way == "each":
                            await connection.executemany(_UPSERT, rows)
                        else:
                            columns = list(zip(*rows, strict=True))
                            await connection.execute(_UPSERT_ONE, rows[0][0], *columns[1:])
                    name = f"{way}_triggers_{'on' if on else 'off'}"
                    times[name].append((time.perf_counter() - started) * 1000)
    finally:
        await connection.execute("ALTER TABLE breadcrumb_edges ENABLE TRIGGER USER")
        await connection.close()
    return {name: _percentiles(values) for name, values in times.items()}


def _stable(explain: dict[str, Any]) -> str:
    """The explanation without what differs between two runs of one assembly anyway."""
    return json.dumps(explain, sort_keys=True, default=str)


def markdown(result: dict[str, Any]) -> str:
    a, w = result["adjacency"], result["edge_write_ms"]
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
        "Inside the graph phase, p50 / p99 (hops: the ranked walk's, by query or in memory;"
        " catch-up: the change-log look before a walk in memory):",
        "",
        "| walk | hops | records | catch-up |",
        "|---|---:|---:|---:|",
    ]
    for name in ("sql", "memory"):
        parts = result["graph_parts_ms"][name]
        cells = " | ".join(
            f"{parts[p]['p50']} / {parts[p]['p99']}" for p in ("hops", "records", "catch_up")
        )
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        f"Contexts or explanations that differ between the two: **{result['outputs_differ']}**.",
        f"Edge lists longer than the fan-out: {result['fanout_ties']['lists_longer_than_fanout']},"
        f" of which the cap cuts inside a tie of type and weight (decided by the id order):"
        f" {result['fanout_ties']['cut_inside_a_tie']}.",
        "One record's edge writes (10 upserts, one transaction), change-log triggers on / off,"
        " p50 (p99) ms: one statement per edge"
        f" {w['each_triggers_on']['p50']} ({w['each_triggers_on']['p99']}) /"
        f" {w['each_triggers_off']['p50']} ({w['each_triggers_off']['p99']});"
        " one statement for all"
        f" {w['one_triggers_on']['p50']} ({w['one_triggers_on']['p99']}) /"
        f" {w['one_triggers_off']['p50']} ({w['one_triggers_off']['p99']}).",
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
        result["edge_write_ms"] = asyncio.run(edge_write_cost(services.postgres.dsn))
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
