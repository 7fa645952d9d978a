"""Cairn's performance benchmark (issue 6): assembly latency per phase against an RCRT-style
baseline on the same data, search recall, ingest throughput and SSE fan-out.

    .venv/bin/python benchmarks/perf.py --scale 10000 --triggers 300 --name quick

Generates (or reuses from `.cairn-bench/`) a corpus of SCALE records with real embeddings,
loads it with COPY into a fresh embedded PostgreSQL, builds HNSW, starts `cairn serve` on
it, then measures. Writes benchmarks/results/NAME.json, NAME.md and NAME.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import httpx  # noqa: E402
from perfbench import (  # noqa: E402
    corpus as corpus_module,
    load,
    recall,
    report,
    server,
)
from perfbench.cairn_run import CairnRunner, instrument  # noqa: E402
from perfbench.measure import PublishProbe, Samples  # noqa: E402
from perfbench.rcrt_baseline import RcrtBaseline  # noqa: E402

from cairn.config import Settings  # noqa: E402
from cairn.context.tokens import ensure_tokenizer_files, load_encoding  # noqa: E402
from cairn.runtime import free_port  # noqa: E402
from cairn.runtime.heap import tune_collector  # noqa: E402

CACHE = REPO / ".cairn-bench"
RESULTS = REPO / "benchmarks" / "results"


def trigger_events(corpus: corpus_module.Corpus, count: int) -> list[dict[str, Any]]:
    """``count`` user messages spread evenly over the corpus (so across sessions), oldest
    first: an older trigger handled after a newer one of its session would not be written."""
    pool = corpus.triggers
    step = max(1, len(pool) // max(1, count))
    picked = pool[step // 2 :: step][:count]
    return [corpus_module.created_event(corpus.rows[index]) for index in picked]


def corpus_and_triggers(
    scale: int, unique_texts: int, count: int, name: str
) -> tuple[corpus_module.Corpus, Path]:
    """The cached corpus at ``scale`` and ``count`` of its triggers, written to a file in the
    cache for child processes to read (``--events``)."""
    corpus = corpus_module.load_or_build(
        scale, CACHE, REPO / ".cairn" / "models", unique_texts=unique_texts
    )
    events_file = CACHE / f"{name}.json"
    events_file.write_text(json.dumps(trigger_events(corpus, count)))
    return corpus, events_file


async def assembly(args: argparse.Namespace, corpus: Any, urls: dict[str, str]) -> dict[str, Any]:
    settings = Settings(
        database_url=urls["database"], admin_database_url=urls["admin"], nats_url=urls["nats"],
        data_dir=CACHE / "data",
    )  # fmt: skip
    probe = PublishProbe(urls["nats"])
    await probe.start()
    events = trigger_events(corpus, args.triggers + args.warmup)
    warmup, measured = events[: args.warmup], events[args.warmup :]
    cold_every = max(1, len(measured) // max(1, args.cold))
    instrument()
    runner = CairnRunner(settings, probe)
    await runner.fresh()
    # As `cairn worker` does at start-up; this also takes the benchmark's own corpus, which
    # no worker holds, out of the collector's sight (the baseline runs under the same).
    tune_collector()
    warm, cold = Samples(), Samples()
    for event in warmup:
        await runner.run(event, Samples())
    print(f"cairn: {len(measured)} triggers ({args.cold} cold)", flush=True)
    for n, event in enumerate(measured):
        if n % cold_every == 0 and n // cold_every < args.cold:
            await runner.run_cold(event, cold)
        else:
            await runner.run(event, warm)
    directory = runner.builder.directory  # type: ignore[union-attr]
    agents = await directory.agents(corpus_module.OWNER)
    excluded = await directory.excluded(corpus_module.OWNER)
    await runner.close()
    encoding = load_encoding(ensure_tokenizer_files(CACHE / "data" / "tokenizers"))
    print(f"rcrt baseline: {len(measured)} triggers", flush=True)
    baseline = Samples()
    async with httpx.AsyncClient(base_url=urls["http"], timeout=30) as http:
        rcrt = RcrtBaseline(urls["dsn"], http, probe, encoding, excluded)
        await rcrt.start()
        for event in warmup[:3]:
            await rcrt.run(agents, event, Samples())
        for event in measured:
            await rcrt.run(agents, event, baseline)
        await rcrt.close()
    await probe.close()
    cairn_report = warm.report() | {"cold": cold.report()}
    return {"cairn": cairn_report, "rcrt_baseline": baseline.report()}


async def ingest_and_sse(args: argparse.Namespace, url: str) -> dict[str, Any]:
    import ingest as ingest_bench

    import events as events_bench

    out: dict[str, Any] = {}
    if args.ingest_requests:
        print(f"ingest: {args.ingest_requests} posts, 20 clients", flush=True)
        out["ingest"] = await ingest_bench.load(url, 20, args.ingest_requests)
    out["sse"] = []
    for subscribers in args.sse_subscribers:
        print(f"sse: {subscribers} subscribers x {args.sse_events} events", flush=True)
        # Its own loop (uvloop's, in a thread): the clients' reading costs less there.
        out["sse"].append(
            await asyncio.to_thread(events_bench.run_round, url, subscribers, args.sse_events)
        )
    return out


def worker_rss(env: dict[str, str], root: Path, seconds: float) -> float:
    """Run `cairn worker` on the benchmark's stream (it works through the backlog the
    benchmark left: edges and assemblies) and report its peak resident memory."""
    process = server.start(["worker"], env, CACHE / "worker.log")
    peak = 0.0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and process.poll() is None:
            peak = max(peak, server.rss_mb(process.pid))
            time.sleep(0.5)
    finally:
        server.stop(process)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--triggers", type=int, default=300)
    parser.add_argument("--cold", type=int, default=30, help="of the triggers, run cold")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--unique-texts", type=int, default=100_000)
    parser.add_argument("--ingest-requests", type=int, default=600)
    parser.add_argument("--sse-subscribers", type=int, nargs="*", default=[1, 200])
    # 200, not 50: with 50 events one slow event is 2% of the deliveries, the whole p99.
    parser.add_argument("--sse-events", type=int, default=200)
    parser.add_argument("--worker-seconds", type=float, default=15)
    parser.add_argument("--name", default=None)
    args = parser.parse_args()
    name = args.name or f"scale-{args.scale}"
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    started = time.monotonic()
    load_before = os.getloadavg()
    corpus = corpus_module.load_or_build(
        args.scale, CACHE, REPO / ".cairn" / "models", unique_texts=args.unique_texts
    )
    root = CACHE / f"run-{name}"
    result: dict[str, Any] = {"name": name, "scale": args.scale}
    with load.services(root) as services:
        print("loading (COPY, then HNSW)", flush=True)
        timings = asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        result["corpus"] = {
            "records": len(corpus.rows),
            "edges": len(corpus.edges),
            "texts_unique": corpus.texts_unique,
            "embed_texts_per_s": round(corpus.texts_unique / max(corpus.embed_seconds, 1e-9), 1),
            "load": timings,
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = server.environment(
            services.app_url, services.nats_url, CACHE / "data", admin_url=services.database_url
        )
        serve = server.start(["serve", "--port", str(port)], env, CACHE / "serve.log")
        try:
            server.wait_ready(url, serve, CACHE / "serve.log")
            urls = {
                "database": services.app_url,
                "admin": services.database_url,
                "dsn": services.postgres.dsn,
                "nats": services.nats_url,
                "http": url,
            }
            result |= asyncio.run(assembly(args, corpus, urls))
            print("recall", flush=True)
            result["search"] = asyncio.run(recall.measure_recall(corpus, services.postgres.dsn))
            result |= asyncio.run(ingest_and_sse(args, url))
            result["server_rss_mb"] = server.rss_mb(serve.pid)
        finally:
            server.stop(serve)
        if args.worker_seconds > 0:
            result["worker_rss_mb"] = worker_rss(env, root, args.worker_seconds)
    result |= report.headline(result)
    result["machine"] = {
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
    }
    result["seconds"] = round(time.monotonic() - started, 1)
    result["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    report.write(result, RESULTS)
    print(report.markdown(result))


if __name__ == "__main__":
    main()
