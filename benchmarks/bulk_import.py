"""Bulk import (POST /breadcrumbs/batch) against one-by-one POSTs, in one run.

Starts `cairn up` in a fresh data directory, then writes RECORDS records one by one from
CLIENTS concurrent clients (the best the single route does, benchmarks/ingest.py), and
RECORDS other records in sequential batches of each size in --batches. Every record is a
distinct passage of real prose, one to three sentences (Cairn's README and docs, the design
seeds, the long descriptions of the installed packages), so every one needs its own
embedding, and each carries an idempotency key, as the Python client sends them. Between
the runs the outbox is drained, so that each starts on a quiet server. Prints and writes
a JSON report, with the encoder alone on the same texts: the ceiling of any ingest here.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/bulk_import.py --records 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.ingest import encoder_speed
from tests.processes import start_cairn_up

REPO = Path(__file__).resolve().parents[1]
MODEL_DIR = Path(os.environ.get("CAIRN_TEST_MODEL_DIR", REPO / ".cairn" / "models"))
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])")
PENDING = re.compile(r"^cairn_outbox_pending\s+([0-9.e+]+)$", re.MULTILINE)


def documents() -> Iterator[tuple[str, str]]:
    """(source, text) of the prose the records are cut from."""
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        yield path.name, path.read_text()
    for path in sorted(Path("/work/shared/seeds").glob("*.txt")):
        yield path.name, path.read_text()
    for dist in sorted(metadata.distributions(), key=lambda d: d.metadata["Name"] or ""):
        description = dist.metadata.get_payload() or ""  # type: ignore[attr-defined]
        if isinstance(description, str) and len(description) > 2000:
            yield dist.metadata["Name"], description


def sentences(text: str) -> list[str]:
    """Prose sentences: no code blocks, tables or headings, each of 6 to 80 words."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("#", "|"))]
    found = [" ".join(part.split()) for part in SENTENCE.split(" ".join(lines))]
    return [s for s in found if 6 <= len(s.split()) <= 80]


def passages(count: int) -> list[dict[str, Any]]:
    """``count`` distinct create bodies: single sentences and windows of two and three,
    shuffled (seed 7) so that every run gets the same mix of lengths."""
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for width in (1, 2, 3):
        for source, text in documents():
            prose = sentences(text)
            for start in range(0, max(0, len(prose) - width + 1)):
                passage = " ".join(prose[start : start + width])
                if passage not in seen and "\x00" not in passage:
                    seen.add(passage)
                    found.append((source, passage))
    if len(found) < count:
        raise SystemExit(f"only {len(found)} distinct passages; ask for fewer records")
    random.Random(7).shuffle(found)
    return [_body(n, source, passage) for n, (source, passage) in enumerate(found[:count])]


def encoder_alone(bodies: list[dict[str, Any]], model_dir: Path) -> dict[str, object]:
    """The encoder alone on these records' texts (nothing else running in this process):
    the ceiling the cores put on any ingest."""
    from cairn.breadcrumbs.text import build_llm_text

    texts = [build_llm_text(b["title"], None, b["context"]) for b in bodies]
    return encoder_speed(texts, model_dir)


def _body(n: int, source: str, passage: str) -> dict[str, Any]:
    return {
        "schema_name": "knowledge.v1",
        "title": " ".join(passage.split()[:8])[:120],
        "tags": ["bench", f"source:{source}", f"session:s{n % 50}"],
        "context": {"text": passage, "source": source, "n": n},
    }


async def one_by_one(http: httpx.AsyncClient, bodies: list[dict[str, Any]], clients: int) -> float:
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for item in bodies:
        queue.put_nowait(item)

    async def client_loop() -> None:
        while not queue.empty():
            headers = {"Idempotency-Key": str(uuid.uuid4())}
            response = await http.post("/breadcrumbs", json=queue.get_nowait(), headers=headers)
            assert response.status_code == 201, response.text

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(clients)))
    return time.perf_counter() - started


async def in_batches(http: httpx.AsyncClient, bodies: list[dict[str, Any]], size: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(bodies), size):
        records = [r | {"idempotency_key": str(uuid.uuid4())} for r in bodies[start : start + size]]
        response = await http.post("/breadcrumbs/batch", json={"records": records})
        assert response.status_code == 200 and response.json()["created"] == len(records)
    return time.perf_counter() - started


async def drained(http: httpx.AsyncClient) -> None:
    """Until every event of the last run left the outbox (the worker has them)."""
    for _ in range(600):
        match = PENDING.search((await http.get("/metrics")).text)
        if match is None or float(match.group(1)) == 0:
            return
        await asyncio.sleep(0.5)


async def compare(url: str, records: int, clients: int, sizes: list[int]) -> dict[str, Any]:
    bodies = passages(records * (1 + len(sizes)) + 20)
    warm, bodies = bodies[:20], bodies[20:]
    rows = []
    async with httpx.AsyncClient(base_url=url, timeout=600) as http:
        await in_batches(http, warm, 10)  # the model, the pool and the caches; not measured
        await drained(http)
        seconds = await one_by_one(http, bodies[:records], clients)
        rows.append({"mode": f"POST /breadcrumbs, {clients} clients", "seconds": seconds})
        for n, size in enumerate(sizes, start=1):
            await drained(http)
            part = bodies[n * records : (n + 1) * records]
            seconds = await in_batches(http, part, size)
            rows.append({"mode": f"POST /breadcrumbs/batch, {size} a batch", "seconds": seconds})
    for row in rows:
        row["records"] = records
        row["records_per_s"] = round(records / row["seconds"], 1)
        row["seconds"] = round(row["seconds"], 2)
        row["speed-up"] = round(row["records_per_s"] / rows[0]["records_per_s"], 2)
    return {"rows": rows, "mean_words": _mean_words(bodies)}


def _mean_words(bodies: list[dict[str, Any]]) -> float:
    return round(sum(len(b["context"]["text"].split()) for b in bodies) / len(bodies), 1)


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| mode | records | seconds | records/s | speed-up |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r['records']} | {r['seconds']} | {r['records_per_s']} "
            f"| {r['speed-up']}x |"
        )
    return "\n".join(lines)


class ServerLog:
    """Reads the server's output as it comes (a full pipe would stall it), counting the
    warnings: an embedding that failed or timed out says so there."""

    def __init__(self, server: subprocess.Popen[str]) -> None:
        self.warnings: list[str] = []
        threading.Thread(target=self._read, args=(server,), daemon=True).start()

    def _read(self, server: subprocess.Popen[str]) -> None:
        assert server.stdout is not None
        for line in server.stdout:
            if " WARNING " in line or " ERROR " in line:
                self.warnings.append(line.strip()[:300])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000, help="per mode")
    parser.add_argument("--clients", type=int, default=20, help="of the one-by-one run")
    parser.add_argument("--batches", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--port", type=int, default=8392)
    parser.add_argument("--model-dir", type=Path, default=MODEL_DIR)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/bulk_import.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as data_dir:
        server = start_cairn_up(Path(data_dir), args.port, args.model_dir, drain=False)
        log = ServerLog(server)
        try:
            url = f"http://127.0.0.1:{args.port}"
            report = asyncio.run(compare(url, args.records, args.clients, args.batches))
            report["server_warnings"] = log.warnings
            report["machine"] = {
                "cpus": os.cpu_count(),
                "python": sys.version.split()[0],
                "load_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        finally:
            _stop(server)
    report["encoder_alone"] = encoder_alone(passages(args.records), args.model_dir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(table(report["rows"]) + "\n")
    print(table(report["rows"]))
    print(f"encoder alone on the same texts: {report['encoder_alone']}")
    print(json.dumps(report, indent=2))


def _stop(server: subprocess.Popen[str]) -> None:
    """Ctrl-C, and a kill if the worker's backlog holds it past two minutes."""
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=120)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
