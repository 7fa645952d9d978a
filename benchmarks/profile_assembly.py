"""Where an assembly's time goes, and whether a change pays (issue 20).

    .venv/bin/python benchmarks/profile_assembly.py --scale 10000 --unique-texts 10000 \
        --triggers 150 --rounds 3 --baseline /tmp/base/src --profile

Loads the benchmark corpus (``benchmarks/perf.py``'s, from ``.cairn-bench/``) once into a
fresh embedded PostgreSQL, then runs the same warm triggers through ``ContextBuilder.build``
(assemble, write, commit: what the worker does per event) in child processes that import
Cairn from a given source tree: this checkout, and with ``--baseline`` another one (e.g.
``git archive <commit> src | tar -x -C /tmp/base``; ``--variant NAME=SRC`` adds more),
rotating their order round by round so all see the same machine load. Reports medians per
phase and end to end. ``--profile`` runs each ``--profile-variant`` (default: this checkout) once
more under cProfile and writes the top frames (cumulative and own time) to
``benchmarks/results/profile-NAME-VARIANT.txt``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
        args.scale, args.unique_texts, args.triggers + args.warmup, f"profile-events-{args.name}"
    )
    variants = {"baseline": Path(args.baseline)} if args.baseline else {}
    for named in args.variant or [f"this={REPO / 'src'}"]:
        name, _, src = named.partition("=")
        variants[name] = Path(src)
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    with load.services(CACHE / f"run-profile-{args.name}") as services:
        print("loading (COPY, then HNSW)", flush=True)
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        common = [
            "--database-url", services.app_url, "--admin-database-url", services.database_url,
            "--nats-url", services.nats_url,
            "--events", str(events_file), "--warmup", str(args.warmup),
            *(["--sql-graph"] if args.sql_graph else []), *(["--cpu"] if args.cpu else []),
            *(["--counts"] if args.counts else []),
            *(["--statements"] if args.statements else []),
            *(["--dump", args.dump] if args.dump else []),
        ]  # fmt: skip
        for round_ in range(args.rounds):
            shift = round_ % len(variants)
            order = list(variants)[shift:] + list(variants)[:shift]
            for name in order:
                out = _child(variants[name], common)
                samples[name] += out
                print(f"round {round_ + 1} {name}: e2e p50 {_median(out, 'e2e'):.2f} ms")
                print(_table(samples), flush=True)  # so far
        if args.profile:
            for name in args.profile_variant or ["this"]:
                text_file = RESULTS / f"profile-{args.name}-{name}.txt"
                _child(variants[name], [*common, "--profile", str(text_file)])
                print(f"profile of {name}: {text_file}")
    print(_table(samples))
    print(_differing(samples))
    for name, rows in samples.items():
        if any("statements" in row for row in rows):
            print(f"round trips of {name}:")
            print(_statement_table(rows))
    if args.samples:
        Path(args.samples).write_text(json.dumps(samples))
        print(f"every assembly's phases and counts: {args.samples}")


def _child(src: Path, common: list[str]) -> list[dict[str, Any]]:
    command = [sys.executable, __file__, "child", "--src", str(src), *common]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _median(rows: list[dict[str, Any]], key: str) -> float:
    values = [row[key] for row in rows if key in row]
    return statistics.median(values) if values else 0.0


_COUNTS = [
    "records_loaded", "records_sent", "blocks_wanted", "blocks_cached", "blocks_stored",
    "blocks_rendered", "tiktoken_encodes", "gc0_us", "gc1_us", "gc2_us",
]  # fmt: skip


def _table(samples: dict[str, list[dict[str, Any]]]) -> str:
    keys = ["e2e", "trigger", "signals", "seeds", "graph", "render_items", "rank", "select"]
    keys += ["render", "write"]
    keys += [k for k in _COUNTS if any(k in row for rows in samples.values() for row in rows)]
    names = list(samples)
    lines = [
        "| phase p50 ms | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for key in keys:
        cells = [f"{_median(samples[name], key):.2f}" for name in names]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    counts = [str(len(samples[name])) for name in names]
    lines.append("| assemblies | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def child(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(args.src).resolve()))
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    events = json.loads(Path(args.events).read_text())
    rows, profile = asyncio.run(_run_child(args, events))
    if args.profile:
        Path(args.profile).write_text(profile)
    print(json.dumps(rows))


async def _run_child(
    args: argparse.Namespace, events: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    import uuid

    from cairn.config import Settings
    from cairn.context import builder as builder_module
    from cairn.context.builder import ContextBuilder
    from cairn.context.explain import Timer
    from cairn.db.engine import create_engine, create_session_factory
    from cairn.runtime.heap import tune_collector
    from cairn.transforms import Transforms
    from cairn.worker.app import NoEmbedder

    started_write: dict[str, float] = {}
    write_context = builder_module.write_context

    # --cpu: every phase in this process's CPU time (what the assembly's Python costs),
    # not wall time, which waits for PostgreSQL and for whoever else shares the cores.
    clock = time.process_time if args.cpu else time.perf_counter
    Timer.__init__.__defaults__ = (clock,)

    async def timed_write(*a: Any, **k: Any) -> Any:
        started_write["at"] = clock()
        return await write_context(*a, **k)

    builder_module.write_context = timed_write  # type: ignore[assignment]
    settings = Settings(
        database_url=args.database_url, admin_database_url=args.admin_database_url or None,
        nats_url=args.nats_url, data_dir=CACHE / "data",
    )  # fmt: skip
    engine = create_engine(args.database_url, settings)
    sessions = create_session_factory(engine)
    builder = ContextBuilder.create(
        settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    if settings.context.graph_in_memory and not args.sql_graph:  # as the worker does
        from cairn.context.graph_memory import GraphMemory

        builder.graphs = GraphMemory()  # loaded in the first (warm-up) walk
    tune_collector()
    counts = _count_work(builder) if args.counts else None
    statements = _time_statements() if args.statements else None
    owner = uuid.UUID(OWNER)
    rows: list[dict[str, Any]] = []
    profile = ""

    async def one(event: dict[str, Any], keep: bool) -> None:
        started = clock()
        agents = [a for a in await builder.directory.agents(owner) if a.triggered_by(event)]
        for agent in agents:
            row = await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])
            committed = clock()
            if keep and row is not None:
                sample: dict[str, Any] = dict(row["context"]["timings_ms"])
                sample["write"] = (committed - started_write["at"]) * 1000
                sample["e2e"] = (committed - started) * 1000
                sample["digest"] = _digest(event["breadcrumb_id"], row["context"])
                if args.dump:
                    _dump(Path(args.dump), event["breadcrumb_id"], row["context"])
                if counts is not None:
                    sample.update(counts)
                    counts.clear()
                if statements is not None:
                    sample["statements"] = list(statements)
                rows.append(sample)
            if counts is not None:
                counts.clear()
            if statements is not None:
                statements.clear()

    for event in events[: args.warmup]:
        await one(event, False)
    measured = events[args.warmup :]
    if args.profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for event in measured:
            await one(event, True)
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).strip_dirs()
        out.write(f"{len(rows)} assemblies; e2e p50 {_median(rows, 'e2e'):.2f} ms\n")
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(45)
        profile = out.getvalue()
    else:
        for event in measured:
            await one(event, True)
    await engine.dispose()
    return rows, profile


def _time_statements() -> list[tuple[str, float]]:
    """--statements: every round trip an assembly makes to PostgreSQL, as (the statement's
    first words, wall milliseconds from send to the whole answer) — what the phases wait
    for, apart from the Python around them. Patches asyncpg where SQLAlchemy and
    ``cairn.db.driver`` call it."""
    import asyncpg
    from asyncpg import prepared_stmt

    timed: list[tuple[str, float]] = []

    def label(query: str) -> str:
        return " ".join(query.split())[:70]

    def wrap(owner: Any, name: str, query_of: Any) -> None:
        original = getattr(owner, name)

        async def timed_call(self: Any, *a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(self, *a, **k)
            finally:
                timed.append(
                    (f"{name}: {label(query_of(self, a))}", (time.perf_counter() - started) * 1000)
                )

        setattr(owner, name, timed_call)

    wrap(asyncpg.Connection, "execute", lambda self, a: str(a[0]) if a else "")
    wrap(asyncpg.Connection, "fetch", lambda self, a: str(a[0]) if a else "")  # cairn.db.driver
    wrap(asyncpg.Connection, "prepare", lambda self, a: str(a[0]) if a else "")
    for name in ("fetch", "fetchrow", "fetchval"):
        wrap(prepared_stmt.PreparedStatement, name, lambda self, a: self._query)
    return timed


def _statement_table(rows: list[dict[str, Any]]) -> str:
    """Per statement: how many an assembly sends, and their wall time per assembly (mean)."""
    totals: dict[str, list[float]] = {}
    for row in rows:
        for label, ms in row.get("statements", []):
            totals.setdefault(label, []).append(ms)
    n = max(1, len(rows))
    lines = [
        "| statement | per assembly | mean ms | p50 ms | ms per assembly |",
        "|---|---:|---:|---:|---:|",
    ]
    ordered = sorted(totals.items(), key=lambda item: -sum(item[1]))
    for label, values in ordered:
        lines.append(
            f"| `{label}` | {len(values) / n:.2f} | {statistics.mean(values):.3f} |"
            f" {statistics.median(values):.3f} | {sum(values) / n:.3f} |"
        )
    every = sum(sum(v) for v in totals.values()) / n
    lines.append(f"| all | {sum(len(v) for v in totals.values()) / n:.2f} | | | {every:.3f} |")
    return "\n".join(lines)


def _count_work(builder: Any) -> dict[str, int]:
    """--counts: per assembly, what the caches saved and what was done again — records sent
    whole vs from the record cache, blocks from the block cache (of which read from the
    stored blocks, when the tree has them) vs rendered (Jinja/compact), and texts tiktoken
    encoded (the counter's own cache missed) — and the collector's pauses by generation
    (microseconds; absent when it did not run)."""
    from cairn.context import records as records_module, render as render_module

    counts: dict[str, int] = {}

    def bump(key: str, by: int = 1) -> None:
        counts[key] = counts.get(key, 0) + by

    import gc

    collecting: dict[str, float] = {}

    def collection(phase: str, info: dict[str, int]) -> None:  # the collector's pauses
        if phase == "start":
            collecting["at"] = time.perf_counter()
        elif "at" in collecting:
            pause = round((time.perf_counter() - collecting.pop("at")) * 1_000_000)
            bump(f"gc{info['generation']}_us", pause)

    gc.callbacks.append(collection)

    to_record = records_module.to_record

    def counted_to_record(row: Any) -> Any:
        bump("records_sent")
        return to_record(row)

    records_module.to_record = counted_to_record
    load_cached = records_module.load_records_cached

    async def counted_load(session: Any, owner: Any, ids: Any, *rest: Any, **k: Any) -> Any:
        found = await load_cached(session, owner, ids, *rest, **k)
        bump("records_loaded", len(found))
        return found

    records_module.load_records_cached = counted_load
    builder_module = sys.modules["cairn.context.builder"]
    load_blocks = getattr(builder_module, "load_blocks", None)  # a tree with stored blocks
    if load_blocks is not None:

        async def counted_blocks(session: Any, wanted: Any) -> Any:
            found = await load_blocks(session, wanted)
            bump("blocks_stored", len(found))
            return found

        builder_module.load_blocks = counted_blocks
    for module in list(sys.modules.values()):  # whoever imported the name
        if getattr(module, "load_records_cached", None) is load_cached:
            module.load_records_cached = counted_load  # type: ignore[attr-defined]
    init = render_module.ItemBlocks.__init__

    def counted_init(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        bump("blocks_wanted", len(k.get("keys") or {}))
        bump("blocks_cached", len(getattr(self, "_cached", ())))

    render_module.ItemBlocks.__init__ = counted_init  # type: ignore[method-assign]
    serve = getattr(render_module.ItemBlocks, "serve", None)
    if serve is not None:  # a tree that serves stored blocks after the cache's

        def counted_serve(self: Any, stored: Any) -> None:
            serve(self, stored)
            bump("blocks_cached", len(stored))

        render_module.ItemBlocks.serve = counted_serve
    render_resolved = builder.transforms.render_resolved

    async def counted_render(records: Any, definitions: Any) -> Any:
        bump("blocks_rendered", len(records))
        return await render_resolved(records, definitions)

    builder.transforms.render_resolved = counted_render
    uncached = builder.counter._uncached_count
    counter_cache = builder.counter._count

    def counted_uncached(text: str) -> int:
        bump("tiktoken_encodes")
        return int(uncached(text))

    import functools

    builder.counter._count = functools.lru_cache(maxsize=counter_cache.cache_info().maxsize)(
        counted_uncached
    )
    return counts


def _digest(trigger: str, context: dict[str, Any]) -> list[str]:
    """What must not change between variants: the text and the explanation."""
    kept = {"text": context["formatted_context"], "explain": context["explain"]}
    canonical = json.dumps(kept, sort_keys=True, default=str).encode()
    return [trigger, hashlib.sha256(canonical).hexdigest()]


def _dump(directory: Path, trigger: str, context: dict[str, Any]) -> None:
    """--dump: each trigger's text and explanation, one file per run of it, to diff the
    ones that differ."""
    directory.mkdir(parents=True, exist_ok=True)
    kept = {"text": context["formatted_context"], "explain": context["explain"]}
    runs = len(list(directory.glob(f"{trigger}-*.json")))
    (directory / f"{trigger}-{runs}.json").write_text(
        json.dumps(kept, sort_keys=True, indent=1, default=str)
    )


def _differing(samples: dict[str, list[dict[str, Any]]]) -> str:
    """Per variant, the triggers whose context or explanation differ from the first
    variant's (the baseline's) first run of them."""
    names = list(samples)
    reference: dict[str, str] = {}
    for row in samples[names[0]]:
        reference.setdefault(*row["digest"])
    lines = []
    for name in names:
        runs = [row["digest"] for row in samples[name]]
        differ = {t for t, d in runs if reference.get(t, d) != d}
        lines.append(
            f"contexts or explanations that differ, {name} vs {names[0]}:"
            f" {len(differ)} of {len({t for t, _ in runs})} triggers"
            + (f" ({', '.join(sorted(differ)[:5])})" if differ else "")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="driver", choices=["driver", "child"])
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--unique-texts", type=int, default=10_000)
    parser.add_argument("--triggers", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="another checkout's src directory")
    parser.add_argument(
        "--variant", action="append", default=[], help="NAME=SRC (default: this=./src)"
    )
    parser.add_argument("--profile", nargs="?", const="1", default=None)
    parser.add_argument(
        "--profile-variant", action="append", default=[], help="a variant's NAME (repeat)"
    )
    parser.add_argument(
        "--sql-graph", action="store_true", help="walk by SQL, not the worker's in-memory graph"
    )
    parser.add_argument("--cpu", action="store_true", help="phases in CPU time, not wall time")
    parser.add_argument(
        "--counts", action="store_true", help="per assembly: cache hits, renders, encodes"
    )
    parser.add_argument("--dump", default="", help="a directory: every context, per run")
    parser.add_argument(
        "--statements", action="store_true", help="per assembly: every round trip, timed"
    )
    parser.add_argument("--samples", help="a JSON file: every assembly's row, per variant")
    parser.add_argument("--name", default="quick")
    parser.add_argument("--src", default=str(REPO / "src"))
    parser.add_argument("--database-url", default="", help="the application role's (serves)")
    parser.add_argument("--admin-database-url", default="", help="the superuser's (migrates)")
    parser.add_argument("--nats-url", default="")
    parser.add_argument("--events", default="")
    args = parser.parse_args()
    if args.mode == "child":
        child(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
