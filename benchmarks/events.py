"""Event latency (commit → SSE client) with 1, 50 and 200 subscribers, and relay throughput.

    .venv/bin/python benchmarks/events.py [--events 200] [--subscribers 1 50 200]

Latency: a real `cairn up` in a fresh data directory; N SSE clients subscribe; breadcrumbs
are posted one at a time and each client records when the event arrives. The clock starts
when the POST response is received — the transaction committed before the response was
sent, so the true commit → SSE latency is at most that much larger (loopback, < 1 ms).

Relay throughput: outbox rows inserted straight into a fresh database, then one relay
publishes them to JetStream; the rate is rows published per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.processes import start_cairn_up, stop  # noqa: E402

from cairn.config import EventSettings, Settings  # noqa: E402
from cairn.db.engine import create_engine  # noqa: E402
from cairn.db.migrate import upgrade  # noqa: E402
from cairn.events.broker import JetStreamBroker  # noqa: E402
from cairn.events.relay import OutboxRelay  # noqa: E402
from cairn.events.stream_setup import ensure_stream  # noqa: E402
from cairn.runtime import EmbeddedNats, EmbeddedPostgres, free_port  # noqa: E402


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "p50": at(0.5),
        "p95": at(0.95),
        "p99": at(0.99),
        "mean": round(statistics.mean(ordered) * 1000, 2),
    }


async def subscriber(
    url: str, tag: str, arrivals: dict[str, list[float]], ready: asyncio.Event
) -> None:
    async with (
        httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(10, read=None)) as http,
        http.stream("GET", "/events/stream", params={"any_tags": tag}) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith(": connected"):
                ready.set()
            elif line.startswith("data: "):
                event = json.loads(line[6:])
                if "breadcrumb_id" in event:
                    arrivals.setdefault(event["breadcrumb_id"], []).append(time.perf_counter())


async def latency_round(url: str, subscribers: int, events: int) -> dict[str, object]:
    tag = f"bench:{uuid.uuid4().hex[:8]}"
    arrivals: dict[str, list[float]] = {}
    readies = [asyncio.Event() for _ in range(subscribers)]
    tasks = [asyncio.create_task(subscriber(url, tag, arrivals, r)) for r in readies]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    committed: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for i in range(events):
            body = {"schema_name": "note.v1", "title": f"e{i}", "tags": [tag], "context": {"i": i}}
            response = await http.post("/breadcrumbs", json=body)
            committed[response.json()["id"]] = time.perf_counter()
            await asyncio.sleep(0.005)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(map(len, arrivals.values())) < events * subscribers:
        await asyncio.sleep(0.05)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    samples = [t - committed[i] for i, times in arrivals.items() if i in committed for t in times]
    return {
        "subscribers": subscribers,
        "events": events,
        "received": len(samples),
        **percentiles(samples),
    }


async def relay_throughput(rows: int) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix="cairn-relay-bench-"))
    postgres, nats_server = EmbeddedPostgres(root / "pg"), EmbeddedNats(root / "nats")
    try:
        url, nats_url = postgres.start(), nats_server.start()
        engine = create_engine(url, Settings())
        await upgrade(engine)
        await engine.dispose()
        connection = await asyncpg.connect(postgres.dsn)
        payload = json.dumps({"type": "breadcrumb.created", "context": {"text": "x" * 200}})
        owner = uuid.uuid4()
        await connection.copy_records_to_table(
            "outbox",
            records=[
                (owner, f"bc.{uuid.uuid4()}.created", uuid.uuid4(), payload) for _ in range(rows)
            ],
            columns=["owner_id", "subject", "msg_id", "payload"],
        )
        import nats

        client = await nats.connect(nats_url)
        js = client.jetstream()
        settings = EventSettings()
        await ensure_stream(js, settings)
        relay = OutboxRelay(postgres.dsn, lambda: JetStreamBroker(js, settings), settings)
        started = time.perf_counter()
        while await relay.relay_batch(connection):
            pass
        elapsed = time.perf_counter() - started
        await client.close()
        await connection.close()
        return {"rows": rows, "seconds": round(elapsed, 2), "events_per_s": round(rows / elapsed)}
    finally:
        nats_server.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 50, 200])
    parser.add_argument("--relay-rows", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/events.json")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="cairn-events-bench-"))
    port = free_port()
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    # Every subscriber here is the same (anonymous) caller: lift the per-caller SSE cap.
    os.environ.setdefault("CAIRN_LIMITS__MAX_SSE_PER_CALLER", "0")
    server = start_cairn_up(data_dir, port, REPO / ".cairn" / "models")
    try:
        url = f"http://127.0.0.1:{port}"
        rounds = [asyncio.run(latency_round(url, n, args.events)) for n in args.subscribers]
    finally:
        stop(server, signal.SIGINT)
        shutil.rmtree(data_dir, ignore_errors=True)
    report = {
        "latency_ms": rounds,
        "relay": asyncio.run(relay_throughput(args.relay_rows)),
        "machine": {"cpus": os.cpu_count()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
