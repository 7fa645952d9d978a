"""POST /breadcrumbs latency and embedding throughput under concurrent clients.

Starts `cairn up` in a fresh data directory (embedded PostgreSQL and NATS), waits for its
ready line, then has CLIENTS concurrent clients post REQUESTS breadcrumbs with realistic,
distinct texts (every one needs its own embedding). Prints and writes a JSON report, with
the ceiling the two cores put on it: the encoder alone on the same texts (batches of 32,
nothing else running), since every post needs one forward pass of MiniLM.

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

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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


def encoder_ceiling(requests: int, model_dir: Path) -> dict[str, object]:
    """Texts per second of the encoder alone, on the texts the posts carry: what ingest
    would reach if embedding were the only work on the machine."""
    return encoder_speed(post_texts(requests), model_dir)


def encoder_speed(texts: list[str], model_dir: Path) -> dict[str, object]:
    """Texts per second of the encoder alone on ``texts`` (batches of 32), and their mean
    length in word-pieces. Threads as the server's settings say (CAIRN_EMBEDDING__THREADS)."""
    from cairn.config import Settings
    from cairn.embedding import OnnxEncoder, ensure_model

    threads = Settings().embedding.threads
    encoder = OnnxEncoder(ensure_model(model_dir), threads=threads)
    encoder.encode(texts[:32])  # warm-up
    started = time.perf_counter()
    for start in range(0, len(texts), 32):
        encoder.encode(texts[start : start + 32])
    elapsed = time.perf_counter() - started
    tokens = sum(len(ids) for ids in encoder.token_ids(texts)) / len(texts)
    return {
        "texts_per_s": round(len(texts) / elapsed, 1),
        "mean_tokens": round(tokens, 1),
        "threads": threads,
    }


async def load(url: str, clients: int, requests: int) -> dict[str, object]:
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
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(http) for _ in range(clients)))
        elapsed = time.perf_counter() - started
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
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8391)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/ingest.json")
    args = parser.parse_args()
    ceiling = encoder_ceiling(args.requests, REPO / ".cairn" / "models")
    print(f"encoder alone: {ceiling}", flush=True)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as data_dir:
        server = start_cairn_up(Path(data_dir), args.port, REPO / ".cairn" / "models")
        try:
            url = f"http://127.0.0.1:{args.port}"
            report = asyncio.run(load(url, args.clients, args.requests))
            report["encoder_alone"] = ceiling
            report["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=2) + "\n")
            print(json.dumps(report, indent=2), flush=True)
        finally:
            shut_down(server)


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
