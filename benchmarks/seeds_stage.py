"""The whole seed stage of real assemblies at scale: its statement's plan, its time, and
whether a change keeps its seeds (issue 20).

    .venv/bin/python benchmarks/seeds_stage.py --scale 1000000 --triggers 60 \
        --variant base=/tmp/base/src --variant this=src --explain 8

Loads the benchmark corpus (``benchmarks/perf.py``'s, from ``.cairn-bench/``) into a fresh
embedded PostgreSQL (or uses ``--database-url``, a database already loaded by
``perfbench.load``), then runs the benchmark's warm triggers through
``ContextBuilder.build`` (what the worker does per event) in child processes that import
Cairn from each variant's source tree, rounds rotating the variants' order. Each child
records, per trigger, the seed stage's time (``sources.gather``; wall, and the CPU time of its
server process, from /proc: the database must run on this machine) and every source's seeds
(ids and scores); the first variant's seeds are the reference the others are compared
with. ``--explain N``: the last variant also runs ``EXPLAIN (ANALYZE, BUFFERS)`` of the
seed statement exactly as sent (driver-level SQL and parameters) for N triggers, written to
``--explain-file`` (default ``benchmarks/results/seeds_stage-explain-<scale>.txt``). A
variant named ``*-nogin`` runs with the schema set's GIN indexes dropped (as before they
existed), the others with them made. Each child reports its RSS at the end;
``--memory-graph`` makes it walk the worker's in-memory graph (loaded in the warm-up), as
the worker does — without it the graph is walked by SQL and the children start in seconds.
``--tiers``: the last variant also counts, per trigger, the word nominations' records that
hold two or more of the trigger's words (``seeds_tiers.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import seeds_tiers

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cairn-bench"
RESULTS = REPO / "benchmarks" / "results"
OWNER = "00000000-0000-0000-0000-000000000001"


def driver(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO / "src"))
    sys.path.insert(0, str(REPO / "benchmarks"))
    from perf import corpus_and_triggers
    from perfbench import load

    corpus, events_file = corpus_and_triggers(
        args.scale,
        args.unique_texts,
        args.triggers + args.warmup,
        f"seeds-stage-events-{args.scale}",
    )
    # NAME=SRC; a NAME ending in -nogin runs without the schema set's GIN indexes.
    variants = dict(v.partition("=")[::2] for v in args.variant) or {"this": str(REPO / "src")}
    if args.database_url:
        admin = args.admin_database_url or args.database_url
        _compare(args, variants, events_file, args.database_url, admin)
        return
    with load.services(CACHE / f"run-seeds-stage-{args.scale}") as services:
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        # As a worker: the application role, under row-level security.
        _compare(args, variants, events_file, services.app_url, services.database_url)


def _compare(
    args: argparse.Namespace, variants: dict[str, str], events: Path, url: str, admin: str
) -> None:
    names = list(variants)
    explained = args.explain_file or str(RESULTS / f"seeds_stage-explain-{args.scale}.txt")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            asyncio.run(_gin_siblings(admin, present=not name.endswith("-nogin")))
            explain = args.explain if round_ == 0 and name == names[-1] else 0
            command = [
                sys.executable, __file__, "child", "--src", variants[name],
                "--database-url", url, "--admin-database-url", admin, "--events", str(events),
                "--warmup", str(args.warmup), "--explain", str(explain),
                "--explain-file", explained, "--explain-over", str(args.explain_over),
                *(["--memory-graph"] if args.memory_graph else []),
                *(["--tiers"] if args.tiers and name == names[-1] else []),
            ]  # fmt: skip
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            runs[name] += json.loads(done.stdout.strip().splitlines()[-1])
            print(done.stderr.strip().splitlines()[-1], flush=True)
            print(f"round {round_} {name} done", flush=True)
    print(_report(args, names, runs))


async def _gin_siblings(url: str, *, present: bool) -> None:
    """The partial indexes beside the default agent's HNSW one, made or dropped: a
    variant named ``*-nogin`` runs without them (as before they existed)."""
    from perfbench.recall import SEMANTIC_SCHEMAS
    from sqlalchemy.ext.asyncio import create_async_engine

    from cairn.context.sources import nearest

    literal = nearest.schema_list(SEMANTIC_SCHEMAS)
    assert literal is not None
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        for name, ddl in nearest.index_ddls(literal)[1:]:
            await connection.exec_driver_sql(ddl if present else f"DROP INDEX IF EXISTS {name}")
    await engine.dispose()


def _report(args: argparse.Namespace, names: list[str], runs: dict[str, Any]) -> str:
    reference = {row["trigger"]: row["seeds"] for row in runs[names[0]]}
    lines = [
        f"seed stage at {args.scale:,} records: {args.triggers} triggers x {args.rounds} rounds,"
        " variants in rotating order; ms (sources.gather, wall)",
        "",
        "| variant | p50 | p90 | p99 | mean | server CPU p50 / mean"
        " | semantic seeds identical (ids / ids+scores)"
        " | semantic id overlap | all sources' seeds identical |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    for name in names:
        rows = runs[name]
        ms = sorted(row["ms"] for row in rows)
        cpu = sorted(row["server_cpu_ms"] for row in rows)
        first = {row["trigger"]: row["seeds"] for row in reversed(rows)}
        ids_same = scores_same = all_same = 0
        overlaps = []
        lost: list[int] = []  # the reference's rank of each of its seeds a variant lacks
        for trigger, seeds in first.items():
            ref = reference[trigger]
            mine = [s for s in seeds if s[0] == "semantic"]
            theirs = [s for s in ref if s[0] == "semantic"]
            ids_same += [s[1] for s in mine] == [s[1] for s in theirs]
            scores_same += mine == theirs
            all_same += seeds == ref
            union = {s[1] for s in theirs}
            overlaps.append(len(union & {s[1] for s in mine}) / max(1, len(union)))
            kept = {s[1] for s in mine}
            lost += [rank for rank, s in enumerate(theirs, 1) if s[1] not in kept]
        cells = [
            f"{_pct(ms, 0.5):.2f}", f"{_pct(ms, 0.9):.2f}", f"{_pct(ms, 0.99):.2f}",
            f"{statistics.fmean(ms):.2f}", f"{_pct(cpu, 0.5):.2f} / {statistics.fmean(cpu):.2f}",
            f"{ids_same} / {scores_same} of {len(first)}",
            f"{statistics.fmean(overlaps):.4f}", f"{all_same} of {len(first)}",
        ]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        if name != names[0]:
            seeds_in_all = sum(len([s for s in reference[t] if s[0] == "semantic"]) for t in first)
            notes.append(
                f"{name}: {len(lost)} of the reference's {seeds_in_all} semantic seeds missing,"
                f" at its ranks {sorted(lost)}"
            )
        generic = sum(row["plans"][0] > 0 for row in rows)
        notes.append(
            f"{name}: {generic} of {len(rows)} assemblies on a connection that had a generic"
            " plan of the seed statement"
        )
    tiers = [row["tiers"] for row in runs[names[-1]] if row.get("tiers")]
    if tiers:
        notes += ["", seeds_tiers.report(tiers)]
    return "\n".join([*lines, "", *notes])


_PLANS_SQL = (
    "SELECT CAST(coalesce(sum(generic_plans), 0) AS int),"
    " CAST(coalesce(sum(custom_plans), 0) AS int)"
    " FROM pg_prepared_statements WHERE statement LIKE 'SELECT (SELECT coalesce(json_agg%'"
)


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def child(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(args.src).resolve()))
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    events = json.loads(Path(args.events).read_text())
    rows, plans = asyncio.run(_run_child(args, events))
    status = Path("/proc/self/status").read_text()
    rss = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS"))
    print(f"child {args.src}: RSS {int(rss) / 1024:.1f} MB at the end", file=sys.stderr)
    if plans:
        Path(args.explain_file).write_text("\n\n".join(plans) + "\n")
    print(json.dumps(rows))


async def _run_child(
    args: argparse.Namespace, events: list[dict[str, Any]]
) -> tuple[list[Any], list[str]]:
    import uuid

    from sqlalchemy import event as sa_event, text

    from cairn.config import Settings
    from cairn.context import assemble, sources
    from cairn.context.builder import ContextBuilder
    from cairn.db.engine import create_engine, create_session_factory
    from cairn.transforms import Transforms
    from cairn.worker.app import NoEmbedder

    settings = Settings(
        database_url=args.database_url, admin_database_url=args.admin_database_url or None,
        nats_url="nats://127.0.0.1:1", data_dir=CACHE / "data",
    )  # fmt: skip
    engine = create_engine(args.database_url, settings)
    sessions = create_session_factory(engine)
    builder = ContextBuilder.create(
        settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    if args.memory_graph:  # as the worker does (its load takes minutes at 1M)
        from cairn.context.graph_memory import GraphMemory

        builder.graphs = GraphMemory()
    captured: list[tuple[str, Any]] = []
    state = {"on": False}

    @sa_event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _capture(conn: Any, cursor: Any, statement: str, params: Any, *rest: Any) -> None:
        if state["on"]:
            captured.append((statement, params))

    gather = sources.gather
    _PLANS = text(_PLANS_SQL)
    seen: dict[str, Any] = {}

    async def timed(request: Any) -> Any:
        backend = await request.session.scalar(text("SELECT pg_backend_pid()"))
        captured.clear()
        state["on"] = True
        cpu = _server_cpu_ns(backend)
        started = time.perf_counter()
        try:
            batches = await gather(request)
        finally:
            state["on"] = False
        seen["ms"] = (time.perf_counter() - started) * 1000
        seen["server_cpu_ms"] = (_server_cpu_ns(backend) - cpu) / 1e6
        seen["seeds"] = [
            [seed.source, str(seed.record_id), round(seed.score, 9)]
            for batch in batches
            for seed in batch.seeds
        ]
        seen["statements"] = list(captured)
        # Whether this connection's prepared seed statement is planned anew each time.
        plans = await request.session.execute(_PLANS)
        seen["plans"] = list(plans.one())
        if args.tiers and seen.get("hybrid"):
            sql, params = seen.pop("hybrid")
            found = await request.session.execute(text(seeds_tiers.tier_sql(sql)), params)
            seen["tiers"] = seeds_tiers.summary(dict(found.mappings().one()))
        return batches

    if args.tiers:  # the semantic statement and its parameters, for the tier counts
        from cairn.context.sources import semantic

        hybrid_sql = semantic._hybrid_sql

        def recording(*positional: Any, **named: Any) -> Any:
            seen["hybrid"] = hybrid_sql(*positional, **named)
            return seen["hybrid"]

        semantic._hybrid_sql = recording

    assemble.sources.gather = timed  # type: ignore[attr-defined]
    owner = uuid.UUID(OWNER)
    rows: list[dict[str, Any]] = []
    plans: list[str] = []
    for n, event in enumerate(events):
        agents = [a for a in await builder.directory.agents(owner) if a.triggered_by(event)]
        for agent in agents:
            await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])
            if n < args.warmup:
                continue
            rows.append(
                {key: seen[key] for key in ("ms", "server_cpu_ms", "seeds", "plans")}
                | {"trigger": event["breadcrumb_id"], "tiers": seen.pop("tiers", None)}
            )
            if len(plans) < args.explain and seen["ms"] >= args.explain_over:
                plans.append(await _explain(engine, event["breadcrumb_id"], seen))
    await engine.dispose()
    return rows, plans


def _server_cpu_ns(backend: int) -> int:
    """The CPU time the session's server process has used (the database runs on this
    machine): unlike wall time, not inflated by other processes waiting for the cores."""
    return int(Path(f"/proc/{backend}/schedstat").read_text().split()[0])


async def _explain(engine: Any, trigger: str, seen: dict[str, Any]) -> str:
    """The seed statements of one assembly, as sent, under EXPLAIN (ANALYZE, BUFFERS)."""
    out = [f"-- trigger {trigger}: sources.gather took {seen['ms']:.2f} ms in the assembly"]
    async with engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
        for statement, params in seen["statements"]:
            if not statement.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            rows = await raw.fetch("EXPLAIN (ANALYZE, BUFFERS) " + statement, *params)
            out.append("\n".join(row[0] for row in rows))
        await connection.rollback()
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="driver", choices=["driver", "child"])
    parser.add_argument("--scale", type=int, default=1_000_000)
    parser.add_argument("--unique-texts", type=int, default=100_000)
    parser.add_argument("--triggers", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", action="append", default=[], help="NAME=SRC (repeat)")
    parser.add_argument("--explain", type=int, default=0)
    parser.add_argument("--explain-file", default="")
    parser.add_argument(
        "--explain-over", type=float, default=0.0,
        help="explain only triggers whose seed stage took at least this many ms (the tail)",
    )  # fmt: skip
    parser.add_argument(
        "--memory-graph", action="store_true", help="walk the worker's in-memory graph"
    )
    parser.add_argument(
        "--tiers", action="store_true", help="the last variant counts the word nominations' tiers"
    )
    parser.add_argument("--src", default=str(REPO / "src"))
    parser.add_argument("--database-url", default="", help="a loaded database (serves)")
    parser.add_argument("--admin-database-url", default="", help="its superuser's URL")
    parser.add_argument("--events", default="")
    args = parser.parse_args()
    if args.mode == "child":
        child(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
