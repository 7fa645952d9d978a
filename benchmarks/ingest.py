"""POST /breadcrumbs latency and embedding throughput under concurrent clients.

Starts `cairn up` in a fresh data directory (embedded PostgreSQL and NATS), waits for its
ready line, then has CLIENTS concurrent clients post REQUESTS breadcrumbs with realistic,
distinct texts (every one needs its own embedding). Prints and writes a JSON report, with
the ceiling the two cores put on it: the encoder alone on the same texts (batches of 32,
nothing else running), since every post needs one forward pass of MiniLM. The ceiling is
taken before and after the load and averaged: on a shared machine it moves with everyone
else's load. Also reported: CPU milliseconds per post of the server's event loop (API and
worker), its other threads (the encoder), PostgreSQL and NATS, against the encoder's own
CPU per text; and the batches the embedder formed.

    .venv/bin/python benchmarks/ingest.py --clients 20 --requests 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.proc_cpu import CpuAccount, per_item_ms
from tests.processes import start_cairn_up

REPO = Path(__file__).resolve().parents[1]
WORDS = [
    "deploy",
    "staging",
    "database",
    "migration",
    "invoice",
    "customer",
    "order",
    "shipment",
    "refund",
    "agent",
    "tool",
    "search",
    "context",
    "budget",
    "token",
    "session",
    "message",
    "reply",
    "error",
    "retry",
    "timeout",
    "cache",
    "index",
    "vector",
    "keyword",
    "schema",
    "template",
    "render",
    "queue",
    "worker",
    "stream",
    "event",
    "subscriber",
    "webhook",
]


def body(i: int, rng: random.Random) -> dict[str, object]:
    sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 40)))
    return {
        "schema_name": "user.message.v1",
        "title": f"Message {i}",
        "tags": ["bench", f"session:s{i % 50}"],
        "context": {"role": "user", "content": sentence, "turn": i},
    }


def bodies_of(requests: int) -> list[dict[str, object]]:
    rng = random.Random(7)
    return [body(i, rng) for i in range(requests)]


def post_texts(requests: int) -> list[str]:
    """The texts the server embeds for the posts of a run of ``requests``."""
    from cairn.breadcrumbs.text import build_llm_text

    texts = []
    for item in bodies_of(requests):
        context = item["context"]
        assert isinstance(context, dict)
        texts.append(build_llm_text(str(item["title"]), None, context))
    return texts


def encoder_ceiling(requests: int, model_dir: Path, threads: int | None = None) -> dict[str, Any]:
    """Texts per second of the encoder alone, on the texts the posts carry: what ingest
    would reach if embedding were the only work on the machine."""
    return encoder_speed(post_texts(requests), model_dir, threads)


def encoder_speed(texts: list[str], model_dir: Path, threads: int | None = None) -> dict[str, Any]:
    """Texts per second of the encoder alone on ``texts`` (batches of 32), and their mean
    length in word-pieces. Threads as the server's settings say (CAIRN_EMBEDDING__THREADS)."""
    from cairn.config import Settings
    from cairn.embedding import OnnxEncoder, ensure_model

    threads = Settings().embedding.threads if threads is None else threads
    encoder = OnnxEncoder(ensure_model(model_dir), threads=threads)
    encoder.encode(texts[:32])  # warm-up
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 32):
        encoder.encode(texts[start : start + 32])
    elapsed = time.perf_counter() - started
    tokens = sum(len(ids) for ids in encoder.token_ids(texts)) / len(texts)
    return {
        "texts_per_s": round(len(texts) / elapsed, 1),
        "cpu_ms_per_text": round((time.process_time() - cpu) * 1000 / len(texts), 2),
        "mean_tokens": round(tokens, 1),
        "threads": threads,
    }


async def load(
    url: str, clients: int, requests: int, cpu: CpuAccount | None = None
) -> dict[str, Any]:
    bodies = bodies_of(requests)
    latencies: list[float] = []
    queue: asyncio.Queue[dict[str, object]] = asyncio.Queue()
    for item in bodies:
        queue.put_nowait(item)

    async def client_loop(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            payload = queue.get_nowait()
            started = time.perf_counter()
            response = await http.post("/breadcrumbs", json=payload)
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as http:
        for warm in bodies[:20]:  # warm the model and the pool; not measured
            await http.post("/breadcrumbs", json=warm | {"title": "warm-up"})
        metrics_before = await embedder_metrics(http)
        cpu_before = cpu.snapshot() if cpu else None
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(http) for _ in range(clients)))
        elapsed = time.perf_counter() - started
        cpu_after = cpu.snapshot() if cpu else None
        metrics_after = await embedder_metrics(http)
    latencies.sort()

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 2)

    return {
        "clients": clients,
        "requests": requests,
        "seconds": round(elapsed, 2),
        "posts_per_s": round(requests / elapsed, 1),
        "embeddings_per_s": round(requests / elapsed, 1),
        "latency_ms": {"p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99), "max": pct(1.0)},
        "cpu_ms_per_post": (
            per_item_ms(cpu_before, cpu_after, requests) if cpu_before and cpu_after else None
        ),
        "embedder": embedder_use(metrics_before, metrics_after, elapsed),
    }


EMBEDDER_METRICS = (
    "cairn_embedding_batch_size_sum",
    "cairn_embedding_batch_size_count",
    "cairn_embedding_encode_seconds_total",
)


async def embedder_metrics(http: httpx.AsyncClient) -> dict[str, float]:
    text = (await http.get("/metrics")).text
    found: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in EMBEDDER_METRICS:
            found[name] = float(value)
    return found


def embedder_use(
    before: dict[str, float], after: dict[str, float], elapsed: float
) -> dict[str, float] | None:
    """Mean texts per forward pass during the load, and the share of it the encoder ran."""
    if not all(name in after for name in EMBEDDER_METRICS):
        return None
    delta = {name: after[name] - before.get(name, 0.0) for name in EMBEDDER_METRICS}
    passes = delta["cairn_embedding_batch_size_count"]
    return {
        "forward_passes": passes,
        "mean_batch": round(delta["cairn_embedding_batch_size_sum"] / max(passes, 1), 2),
        "busy_share": round(delta["cairn_embedding_encode_seconds_total"] / elapsed, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8391)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/ingest.json")
    parser.add_argument(
        "--ceiling-threads",
        type=int,
        default=None,
        help="the encoder's threads for the ceiling (default: as the server's settings say); "
        "the ceiling of a server given fewer threads is still that of both cores",
    )
    parser.add_argument(
        "--server-src",
        type=Path,
        default=None,
        help="run the server from another tree's src/ (its migrations/ beside it), for A/B "
        "runs of two commits: git archive <commit> src migrations | tar -x -C /tmp/x",
    )
    args = parser.parse_args()
    models = REPO / ".cairn" / "models"
    ceiling_before = encoder_ceiling(args.requests, models, args.ceiling_threads)
    print(f"encoder alone: {ceiling_before}", flush=True)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as data_dir:
        tree = {"PYTHONPATH": str(args.server_src.resolve())} if args.server_src else None
        server = start_cairn_up(Path(data_dir), args.port, models, tree)
        try:
            cpu = CpuAccount(server.pid, Path(data_dir))
            url = f"http://127.0.0.1:{args.port}"
            report = asyncio.run(load(url, args.clients, args.requests, cpu))
        finally:
            shut_down(server)
    ceiling_after = encoder_ceiling(args.requests, models, args.ceiling_threads)
    print(f"encoder alone, after: {ceiling_after}", flush=True)
    ceiling = mean_ceiling(ceiling_before, ceiling_after)
    report["encoder_alone"] = ceiling
    report["share_of_ceiling"] = round(report["posts_per_s"] / ceiling["texts_per_s"], 3)
    report["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2), flush=True)


def mean_ceiling(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The two measurements of the ceiling, averaged (each kept for the record)."""
    out = dict(before)
    for key in ("texts_per_s", "cpu_ms_per_text"):
        out[key] = round((before[key] + after[key]) / 2, 2)
    out["before"], out["after"] = before, after
    return out


def shut_down(server: subprocess.Popen[str]) -> None:
    """Stop the server before its data directory goes; on a busy machine it may take long."""
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=120)
    except subprocess.TimeoutExpired:
        print("server did not stop within 120 s; killed", file=sys.stderr)
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
