"""Scale-out (issue 20): one API, PostgreSQL and NATS, the cached 10k corpus, and 1, 2 or 4
`cairn worker` processes sharing the durable JetStream consumer, at fixed offered loads.

    .venv/bin/python benchmarks/scaleout.py [--workers 1 2 4] [--rates 5 10 20 40] [--seconds 10]

A trigger is a ``breadcrumb.created`` event of a stored user message, published to JetStream
as the outbox relay would (open loop: at its scheduled time, whatever is still in flight).
Its end is the ``agent.context.v1`` event that names it (``trigger_event_id``) arriving on
NATS: the worker assembled and committed the context and the API's outbox relay published
it. Every trigger record is used once in the whole run, and rounds go through the sessions
(the k-th message of every session before any (k+1)-th), so no two triggers in flight share
a context record and none is held back as older than a context already written.

Correctness: every trigger must get exactly one context event and exactly one assembly log
entry (none lost, none twice, e.g. by a redelivery). A worker's share of the assemblies comes
from the log itself: the benchmark's throwaway database gives the log a column defaulting to
the writing connection's backend pid, and the backends are mapped to worker processes by
their TCP ports. Writes benchmarks/results/scaleout.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import asyncpg  # noqa: E402
import nats  # noqa: E402
from perfbench import corpus as corpus_module, load, server  # noqa: E402
from perfbench.measure import percentile  # noqa: E402
from scaleout_procs import CpuMeter, Workers, service_pids  # noqa: E402
from scaleout_report import markdown  # noqa: E402

from cairn.config import EventSettings  # noqa: E402
from cairn.events.payloads import STREAM_SUBJECTS  # noqa: E402
from cairn.events.stream_setup import ensure_stream  # noqa: E402
from cairn.runtime import free_port  # noqa: E402

CACHE = REPO / ".cairn-bench"
RESULTS = REPO / "benchmarks" / "results"
CONTEXT_SCHEMA = "agent.context.v1"
# The benchmark's own database only: which connection wrote each assembly log entry.
BACKEND_COLUMN = "ALTER TABLE assemblies ADD COLUMN bench_backend int DEFAULT pg_backend_pid()"


def trigger_plan(corpus: corpus_module.Corpus) -> list[dict[str, Any]]:
    """Every stored user message once, as events: round k holds the k-th message of every
    session (sessions in corpus order), so a session comes back only a whole round later."""
    by_session: dict[str, list[int]] = defaultdict(list)
    for index in corpus.triggers:
        tags = corpus.rows[index]["tags"]
        by_session[next((t for t in tags if t.startswith("session:")), "")].append(index)
    rounds = max(len(v) for v in by_session.values())
    order = [v[k] for k in range(rounds) for v in by_session.values() if k < len(v)]
    return [
        corpus_module.created_event(row) | {"title": row["title"], "change": "created"}
        for row in (corpus.rows[index] for index in order)
    ]


class ContextProbe:
    """Every ``agent.context.v1`` event's arrival, by the trigger event it names."""

    def __init__(self) -> None:
        self.arrivals: dict[str, list[float]] = defaultdict(list)
        self.changed = asyncio.Event()
        self.subjects: Counter[str] = Counter()  # every event on the stream, by kind

    async def on_message(self, message: Any) -> None:
        now = time.perf_counter()
        kind = message.subject.rsplit(".", 1)[-1]
        if b'"agent.context.v1"' not in message.data:
            self.subjects[f"{kind} other"] += 1
            return
        self.subjects[f"{kind} context"] += 1
        event = json.loads(message.data)
        if event.get("schema_name") != CONTEXT_SCHEMA:
            return
        trigger = (event.get("context") or {}).get("trigger_event_id")
        if trigger:
            self.arrivals[trigger].append(now)
            self.changed.set()


async def offer(js: Any, events: list[dict[str, Any]], rate: float) -> dict[str, float]:
    """Publish ``events`` at ``rate`` per second on schedule; returns when each went out."""
    sent: dict[str, float] = {}
    started = time.perf_counter()
    for i, event in enumerate(events):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent[event["event_id"]] = time.perf_counter()
        subject = f"bc.{event['breadcrumb_id']}.created"
        headers = {"Nats-Msg-Id": event["event_id"]}
        await js.publish(subject, json.dumps(event).encode(), headers=headers)
    return sent


async def settle(probe: ContextProbe, expected: set[str], quiet_s: float) -> None:
    """Until every expected trigger has its context, or none arrived for ``quiet_s``."""
    while not expected <= probe.arrivals.keys():
        probe.changed.clear()
        try:
            await asyncio.wait_for(probe.changed.wait(), quiet_s)
        except TimeoutError:
            return


async def log_entries(
    dsn: str, trigger_ids: list[str]
) -> tuple[list[tuple[str, int]], list[float]]:
    """(trigger record id, writing backend pid) of every worker assembly of these triggers,
    and each one's own time in the worker (the log's ``total_ms``)."""
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT trigger_id::text AS t, bench_backend AS b, total_ms FROM assemblies"
            " WHERE origin = 'worker' AND trigger_id = ANY($1::uuid[])",
            trigger_ids,
        )
        return [(row["t"], row["b"]) for row in rows], [float(r["total_ms"]) for r in rows]
    finally:
        await connection.close()


async def backend_workers(dsn: str, workers: Workers) -> dict[int, int]:
    """Backend pid → worker index, through the client ports of the open connections."""
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL"
        )
    finally:
        await connection.close()
    ports = workers.ports()
    return {row["pid"]: ports[row["client_port"]] for row in rows if row["client_port"] in ports}


async def one_load(
    js: Any,
    probe: ContextProbe,
    workers: Workers,
    dsn: str,
    events: list[dict[str, Any]],
    rate: float,
    backends: dict[int, int],
    cpu_parts: dict[str, list[int]],
) -> dict[str, Any]:
    meter = CpuMeter(cpu_parts | {"workers": [p.pid for p in workers.processes]})
    cpu_before = meter.read()
    probe.subjects.clear()
    workers.start_sampling()
    sent = await offer(js, events, rate)
    offered_s = max(sent.values()) - min(sent.values())
    await settle(probe, set(sent), quiet_s=30)
    rss = await workers.stop_sampling()
    cpu = {name: seconds - cpu_before[name] for name, seconds in meter.read().items()}
    backends |= await backend_workers(dsn, workers)
    entries, assembly_ms = await log_entries(dsn, [e["breadcrumb_id"] for e in events])
    contexts = Counter({event_id: len(probe.arrivals.get(event_id, ())) for event_id in sent})
    logged = Counter(trigger for trigger, _ in entries)
    arrived = {e: probe.arrivals[e][0] for e in sent if probe.arrivals.get(e)}
    e2e = [(arrived[e] - sent[e]) * 1000 for e in arrived]
    span = max(arrived.values()) - min(sent.values()) if arrived else float("nan")
    shares = Counter(backends.get(backend, -1) for _, backend in entries)
    return {
        "workers": len(workers.processes),
        "rate_offered": rate,
        "triggers": len(events),
        "offered_per_s": round((len(sent) - 1) / offered_s, 1) if offered_s else None,
        "completed": len(arrived),
        "completed_per_s": round(len(arrived) / span, 1) if arrived else 0.0,
        "e2e_ms": {
            "p50": round(percentile(e2e, 0.5), 1),
            "p95": round(percentile(e2e, 0.95), 1),
            "p99": round(percentile(e2e, 0.99), 1),
            "max": round(max(e2e, default=0.0), 1),
        },
        "correctness": {
            "contexts_missing": sum(1 for n in contexts.values() if n == 0),
            "contexts_twice": sum(1 for n in contexts.values() if n > 1),
            "log_missing": sum(1 for e in events if logged[e["breadcrumb_id"]] == 0),
            "log_twice": sum(1 for n in logged.values() if n > 1),
        },
        "assembly_ms": {
            "p50": round(percentile(assembly_ms, 0.5), 1),
            "p99": round(percentile(assembly_ms, 0.99), 1),
        },
        "cpu_ms_per_trigger": {
            name: round(seconds * 1000 / max(1, len(arrived)), 1) for name, seconds in cpu.items()
        },
        "stream_events": dict(probe.subjects),
        "worker_peak_rss_mb": rss,
        "assembly_share": [
            round(shares[i] / max(1, len(entries)), 3) for i in range(len(workers.processes))
        ],
        "assemblies_unattributed": shares[-1],
    }


async def configuration(
    count: int,
    env: dict[str, str],
    urls: dict[str, str],
    plan: list[dict[str, Any]],
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    """Start ``count`` workers, warm them, run every offered rate, stop them."""
    client = await nats.connect(urls["nats"])
    js = client.jetstream()
    await ensure_stream(js, EventSettings())
    probe = ContextProbe()
    await client.subscribe(STREAM_SUBJECTS, cb=probe.on_message)
    workers = Workers(count, env, args.profile)
    backends: dict[int, int] = {}
    cpu_parts = service_pids(Path(urls["root"])) | {"api": [int(urls["api_pid"])]}
    try:
        warm = [plan.pop(0) for _ in range(args.warmup * count)]
        print(f"{count} worker(s): warm-up, {len(warm)} triggers", flush=True)
        workers.start_sampling()
        sent = await offer(js, warm, 5.0)
        await settle(probe, set(sent), quiet_s=60)
        await workers.stop_sampling()
        rounds = []
        for rate in args.rates:
            events = [plan.pop(0) for _ in range(int(rate * args.seconds))]
            print(f"{count} worker(s): {rate}/s, {len(events)} triggers", flush=True)
            result = await one_load(
                js, probe, workers, urls["dsn"], events, rate, backends, cpu_parts
            )
            print(json.dumps(result), flush=True)
            rounds.append(result)
        return rounds
    finally:
        workers.stop()
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rates", type=float, nargs="+", default=[5, 10, 20, 40])
    parser.add_argument("--seconds", type=float, default=10, help="of offered load per rate")
    parser.add_argument("--warmup", type=int, default=10, help="triggers per worker")
    parser.add_argument("--unique-texts", type=int, default=100_000)
    parser.add_argument("--name", default="scaleout")
    parser.add_argument("--profile", type=Path, help="run the workers under cProfile, into DIR")
    args = parser.parse_args()
    started = time.monotonic()
    load_before = os.getloadavg()
    corpus = corpus_module.load_or_build(
        10_000, CACHE, REPO / ".cairn" / "models", unique_texts=args.unique_texts
    )
    plan = trigger_plan(corpus)
    needed = sum(n * args.warmup + int(sum(args.rates) * args.seconds) for n in args.workers)
    if needed > len(plan):
        raise SystemExit(f"{needed} triggers needed, the corpus holds {len(plan)}")
    result: dict[str, Any] = {"name": args.name, "scale": 10_000, "rounds": []}
    with load.services(CACHE / f"run-{args.name}") as services:
        print("loading (COPY, then HNSW)", flush=True)
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        asyncio.run(_alter(services.postgres.dsn))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = server.environment(
            services.app_url, services.nats_url, CACHE / "data", admin_url=services.database_url
        )
        serve = server.start(["serve", "--port", str(port)], env, CACHE / "scaleout-serve.log")
        urls = {
            "nats": services.nats_url,
            "dsn": services.postgres.dsn,
            "root": str(services.root),
            "api_pid": str(serve.pid),
        }
        try:
            server.wait_ready(url, serve, CACHE / "scaleout-serve.log")
            for count in args.workers:
                result["rounds"] += asyncio.run(configuration(count, env, urls, plan, args))
            result["server_rss_mb"] = server.rss_mb(serve.pid)
        finally:
            server.stop(serve)
    result["machine"] = {
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
    }
    result["seconds"] = round(time.monotonic() - started, 1)
    result["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(result)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


async def _alter(dsn: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(BACKEND_COLUMN)
    finally:
        await connection.close()


if __name__ == "__main__":
    main()
