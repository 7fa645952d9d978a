"""How stable the SSE commit → client p99 is with 200 subscribers: server variants side by
side, rounds interleaved (A B, then B A, ...), each round's p99 kept.

    .venv/bin/python benchmarks/sse_stability.py --rounds 12 \\
        --variant in-process --variant alone:CAIRN_RUN_WORKER=false

A variant is a name, then any ``KEY=VALUE`` settings of its `cairn up` after colons. Every
variant runs its own `cairn up` (its own PostgreSQL, NATS and, unless told otherwise, its
worker) for the whole run, so the machine's load at any moment falls on each alike. A round
is ``benchmarks/events.py``'s: N bare-asyncio subscribers, M records posted one at a time.

Besides each round's p99 (every subscriber's every event), the round's latency splits in
two: until the event's first frame reached any subscriber (commit → outbox relay → NATS →
the process's feed → one connection), and from there to its last subscriber (the fan-out to
every connection, and the clients' own reading). Writes benchmarks/results/NAME.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import httpx  # noqa: E402
import psutil  # noqa: E402
from tests.processes import start_cairn_up, stop  # noqa: E402

from cairn.runtime import free_port  # noqa: E402
from events import run_round  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"


def collections(url: str) -> dict[str, float]:
    """The server's garbage collections so far: full ones (generation 2) counted by
    prometheus_client's own collector, and, where the server times them, their pauses."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    out = {"gen2": 0.0, "gen2_pause_s": 0.0, "gen2_timed": 0.0}
    for line in text.splitlines():
        if line.startswith('python_gc_collections_total{generation="2"}'):
            out["gen2"] = float(line.split()[-1])
        elif line.startswith('cairn_gc_pause_seconds_sum{generation="2"}'):
            out["gen2_pause_s"] = float(line.split()[-1])
        elif line.startswith('cairn_gc_pause_seconds_count{generation="2"}'):
            out["gen2_timed"] = float(line.split()[-1])
    return out


def one_round(
    url: str, subscribers: int, events: int, gap_s: float, deferred: bool
) -> dict[str, Any]:
    got = run_round(url, subscribers, events, gap_s=gap_s, deferred=deferred)
    first, fanout = got["first_frame"], got["fanout"]
    assert isinstance(first, dict) and isinstance(fanout, dict)
    return {
        "received": got["received"],
        "expected": events * subscribers,
        "p50": got["p50"],
        "p99": got["p99"],
        "first_p50": first["p50"],
        "first_p99": first["p99"],
        "fanout_p50": fanout["p50"],
        "fanout_p99": fanout["p99"],
    }


def _cpu(pid: int) -> float:
    """CPU seconds of the `cairn up` process itself (its API and worker; not PostgreSQL or
    NATS, its children)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, *pairs = text.split(":")
    env = dict(pair.split("=", 1) for pair in pairs)
    return name, env


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in (
        "p99", "p50", "first_p99", "fanout_p99",
        "client_cpu_us_per_delivery", "server_cpu_us_per_delivery",
    ):  # fmt: skip
        values = sorted(r[key] for r in rounds)
        out[key] = {
            "median": round(statistics.median(values), 2),
            "min": values[0],
            "max": values[-1],
            "all": values,
        }
    out["gen2_collections"] = sum(r["gen2_collections"] for r in rounds)
    out["rounds_p99_at_most_10ms"] = sum(1 for r in rounds if r["p99"] <= 10)
    out["lost"] = sum(r["expected"] - r["received"] for r in rounds)
    return out


def _median(line: dict[str, Any], key: str) -> Any:
    return line[key]["median"] if key in line else "-"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# SSE commit → client with {report['subscribers']} subscribers: p99 per round",
        "",
        f"{report['events_per_round']} events a round; variants side by side, interleaved;"
        f" finished {report['finished_at']}; machine {report['machine']}.",
        "Servers: " + ", ".join(f"`{k}` {v or '(as is)'}" for k, v in report["servers"].items()),
        "",
        "| variant | rounds | p99 median | min | max | rounds ≤ 10 ms | p50 median "
        "| first frame p99 median | fan-out p99 median | full collections "
        "| client CPU µs/delivery | server CPU µs/delivery |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, line in report["summary"].items():
        p99 = line["p99"]
        lines.append(
            f"| {name} | {len(p99['all'])} | {p99['median']} | {p99['min']} | {p99['max']} "
            f"| {line['rounds_p99_at_most_10ms']} | {line['p50']['median']} "
            f"| {line['first_p99']['median']} | {line['fanout_p99']['median']} "
            f"| {line['gen2_collections']:g} | {_median(line, 'client_cpu_us_per_delivery')} "
            f"| {_median(line, 'server_cpu_us_per_delivery')} |"
        )
    lines += ["", "Every round's p99 (ms), sorted:", ""]
    for name, line in report["summary"].items():
        lines.append(f"- {name}: {', '.join(f'{x:g}' for x in line['p99']['all'])}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--gap-ms", type=float, default=5.0, help="after each POST's answer")
    parser.add_argument(
        "--clients",
        nargs="+",
        choices=["deferred", "parsing"],
        default=["deferred"],
        help="deferred: subscribers parse after the round; parsing: as frames come",
    )
    parser.add_argument("--name", default="sse_stability")
    args = parser.parse_args()
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    os.environ.setdefault("CAIRN_LIMITS__MAX_SSE_PER_CALLER", "0")
    servers_env = [parse_variant(v) for v in args.variant]
    # Every server with every kind of client: each pair is one variant of the comparison.
    variants = [(f"{name}/{client}", env) for name, env in servers_env for client in args.clients]
    servers: dict[str, tuple[Any, Path, str]] = {}
    load_before = os.getloadavg()
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    try:
        for name, env in servers_env:
            data_dir = Path(tempfile.mkdtemp(prefix=f"cairn-sse-{name}-"))
            port = free_port()
            process = start_cairn_up(data_dir, port, REPO / ".cairn" / "models", env)
            servers[name] = (process, data_dir, f"http://127.0.0.1:{port}")
        for name, _ in servers_env:  # one round each, not kept: connections and caches warm
            one_round(servers[name][2], args.subscribers, 20, args.gap_ms / 1000, True)
        for n in range(args.rounds):
            order = variants if n % 2 == 0 else variants[::-1]
            for name, _ in order:
                server, client = name.split("/")
                url = servers[server][2]
                before = collections(url)
                server_cpu = _cpu(servers[server][0].pid)
                client_cpu = time.process_time()
                result = one_round(
                    url, args.subscribers, args.events, args.gap_ms / 1000, client == "deferred"
                )
                after = collections(url)
                # CPU per delivery does not depend on the machine's other load as latency does.
                deliveries = max(1, result["received"])
                result["client_cpu_us_per_delivery"] = round(
                    (time.process_time() - client_cpu) * 1e6 / deliveries, 1
                )
                result["server_cpu_us_per_delivery"] = round(
                    (_cpu(servers[server][0].pid) - server_cpu) * 1e6 / deliveries, 1
                )
                result["round"] = n
                result["gen2_collections"] = after["gen2"] - before["gen2"]
                if after["gen2_timed"] > before["gen2_timed"]:
                    pause = after["gen2_pause_s"] - before["gen2_pause_s"]
                    result["gen2_pause_ms"] = round(pause * 1000, 1)
                results[name].append(result)
                print(name, json.dumps(result), flush=True)
    finally:
        for process, data_dir, _ in servers.values():
            stop(process, signal.SIGINT)
            shutil.rmtree(data_dir, ignore_errors=True)
    report = {
        "subscribers": args.subscribers,
        "events_per_round": args.events,
        "servers": {name: env for name, env in servers_env},
        "clients": args.clients,
        "summary": {name: summary(rounds) for name, rounds in results.items()},
        "rounds": results,
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(report))
    for name, line in report["summary"].items():
        print(name, json.dumps({k: v for k, v in line.items()}))


if __name__ == "__main__":
    main()
