"""What a tenant's in-memory graph costs in a worker, per source tree: resident memory of
the adjacency built from the perf corpus as ``GraphMemory._load`` builds it (edge pages of
packed ids, then node pages), and the walk's own calls on it.

    .venv/bin/python benchmarks/graph_ids.py --scale 100000 --src /tmp/base/src --src ./src

No database: the pages are made from the cached corpus (``.cairn-bench/``), so the numbers
are the structure's, not a server's. Each tree runs in its own child process (RSS is a
process's; ``trimmed_mb`` after ``malloc_trim``: without the freed memory the allocator
kept), ``--rounds`` times, alternating; medians per tree. The walk calls: one hop of
the ranked walk from 20 random seeds (``hop_rows``, limit 200), the plain walk of radius 1
from them, and the edges among the hop's records (``edges_among``), per call.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cairn-bench"
PAGE = 50_000


def _rss_mb() -> float:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(src: str) -> dict[str, Any]:
    sys.path.insert(0, str(Path(src).resolve()))
    sys.path.insert(0, str(REPO / "benchmarks"))
    import numpy as np
    from asyncpg.pgproto.pgproto import UUID as DriverUUID
    from perfbench import corpus as corpus_module

    from cairn.context.adjacency import Adjacency
    from cairn.context.pathfinder import CostModel
    from cairn.context.walk_memory import Walk, edges_among, hop_rows, plain_walk

    corpus = corpus_module.load_or_build(ARGS.scale, CACHE, None, unique_texts=100_000)
    packed = b"".join(row["id"].bytes for row in corpus.rows)
    schemas = [row["schema_name"] for row in corpus.rows]
    tags = [row["tags"] for row in corpus.rows]
    edges = np.sort(corpus.edges, order=["from", "to", "type"])
    del corpus
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    before = _rss_mb()
    started = time.perf_counter()
    adjacency = Adjacency()
    parts = []
    for at in range(0, len(edges), PAGE):
        page = edges[at : at + PAGE]
        froms = b"".join(packed[16 * i : 16 * i + 16] for i in page["from"].tolist())
        tos = b"".join(packed[16 * i : 16 * i + 16] for i in page["to"].tolist())
        parts.append((
            adjacency.intern_keys(froms), adjacency.intern_keys(tos),
            page["type"].astype(np.int8), page["weight"].astype(np.float32),
        ))  # fmt: skip
    for at in range(0, len(schemas), PAGE):
        rows = [
            (DriverUUID(packed[16 * i : 16 * i + 16]), schemas[i], tags[i], [])
            for i in range(at, min(at + PAGE, len(schemas)))
        ]
        adjacency.set_nodes(rows)
    adjacency.build_columns(*(np.concatenate(c) for c in zip(*parts, strict=True)))
    del parts, rows
    gc.collect()
    load_s = time.perf_counter() - started
    after = _rss_mb()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed heap the allocator kept, returned
    trimmed = _rss_mb()
    rng = random.Random(1)
    walk = Walk(adjacency, 20, None, frozenset(), None, frozenset())
    costs = CostModel()
    timings: dict[str, list[float]] = {"hop": [], "plain": [], "among": []}
    n = len(schemas)
    for _ in range(ARGS.calls):
        seeds = [DriverUUID(packed[16 * i : 16 * i + 16]) for i in rng.sample(range(n), 20)]
        t0 = time.perf_counter()
        rows_ = hop_rows(walk, dict.fromkeys(seeds, 0.0), costs, 200)
        t1 = time.perf_counter()
        plain_walk(walk, seeds, 1)
        t2 = time.perf_counter()
        edges_among(adjacency, seeds + [r[0] for r in rows_], None)
        t3 = time.perf_counter()
        timings["hop"].append((t1 - t0) * 1e3)
        timings["plain"].append((t2 - t1) * 1e3)
        timings["among"].append((t3 - t2) * 1e3)
    return {
        "records": adjacency.size, "edges": adjacency.edge_count,
        "rss_before_mb": before, "rss_after_mb": after, "adjacency_mb": after - before,
        "trimmed_mb": trimmed - before,
        "arrays_mb": adjacency.nbytes / 2**20, "load_s": load_s,
        **{f"{k}_ms": statistics.median(v) for k, v in timings.items()},
    }  # fmt: skip


def main() -> None:
    runs: dict[str, list[dict[str, Any]]] = {src: [] for src in ARGS.src}
    for _ in range(ARGS.rounds):
        for src in ARGS.src:
            command = [sys.executable, __file__, "--child", src, "--scale", str(ARGS.scale),
                       "--calls", str(ARGS.calls)]  # fmt: skip
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            runs[src].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(src, runs[src][-1], flush=True)
    keys = ["adjacency_mb", "trimmed_mb", "arrays_mb", "load_s", "hop_ms", "plain_ms", "among_ms"]
    print(f"| tree ({ARGS.scale:,} records) | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for src, rows in runs.items():
        cells = [f"{statistics.median(r[k] for r in rows):.2f}" for k in keys]
        print(f"| {src} | " + " | ".join(cells) + " |")


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--src", action="append", default=[], help="a source tree (repeat)")
parser.add_argument("--scale", type=int, default=100_000)
parser.add_argument("--rounds", type=int, default=2)
parser.add_argument("--calls", type=int, default=200)
parser.add_argument("--child", default="")
ARGS = parser.parse_args()

if __name__ == "__main__":
    if ARGS.child:
        print(json.dumps(child(ARGS.child)))
    else:
        main()
