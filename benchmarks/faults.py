"""The fault-injection suite: real processes, real faults, lost work counted.

    .venv/bin/python benchmarks/faults.py            # the durations of issue 14 (~25 min)
    .venv/bin/python benchmarks/faults.py --short    # every scenario in seconds (~6 min)
    .venv/bin/python benchmarks/faults.py --only worker_kill late_agent

Starts, on free loopback ports: an embedded PostgreSQL and NATS (run by this harness, so it
can stop and restart them), ``cairn migrate``, one ``cairn serve`` and two ``cairn worker``
processes, all importing Cairn from this checkout. Then an agent is defined (after both
workers started) and each scenario injects its fault under load and counts what was
acknowledged, lost and duplicated. Writes ``benchmarks/results/faults.json`` and
``faults.md`` whatever happens, and exits 1 when anything acknowledged was lost, a 5xx came
that a correct service would not give, or a scenario could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
import tempfile
import traceback
from dataclasses import replace
from pathlib import Path

# The harness and the processes it spawns both use this checkout's Cairn.
sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from faultbench import report  # noqa: E402
from faultbench.common import Durations, Result  # noqa: E402
from faultbench.suite import SCENARIOS, run_all  # noqa: E402
from faultbench.topology import REPO, Topology  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="every scenario in seconds")
    parser.add_argument("--only", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--rate", type=float, help="triggers per second")
    parser.add_argument("--nats-down", type=float, help="seconds NATS stays down")
    parser.add_argument("--postgres-down", type=float, help="seconds PostgreSQL stays down")
    parser.add_argument("--soak", type=float, help="seconds of soak")
    parser.add_argument("--sse-churn", type=int, help="SSE connections dropped")
    parser.add_argument("--model-dir", type=Path, default=REPO / ".cairn" / "models")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--keep", action="store_true", help="keep the data dir and logs")
    return parser.parse_args()


def durations_of(args: argparse.Namespace) -> Durations:
    durations = Durations.short() if args.short else Durations()
    flags = {
        "rate": args.rate,
        "nats_down_s": args.nats_down,
        "postgres_down_s": args.postgres_down,
        "soak_s": args.soak,
        "sse_churn": args.sse_churn,
    }
    return replace(durations, **{k: v for k, v in flags.items() if v is not None})


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so the topology is stopped either way."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def main() -> int:
    args = parse_args()
    _stop_on_sigterm()
    root = Path(tempfile.mkdtemp(prefix="cairn-faults-"))
    topology = Topology(root, args.model_dir)
    results: list[Result] = []
    meta = {"mode": "short" if args.short else "full", "durations": vars(durations_of(args))}
    try:
        print(f"starting the topology in {root}", flush=True)
        topology.start()
        meta["cairn_source"] = topology.cairn_source()
        asyncio.run(run_all(topology, args.only, durations_of(args), results))
    except BaseException as error:  # Ctrl-C too: record it, stop everything, write results
        results.append(Result("harness", "harness", error=f"{type(error).__name__}: {error}"))
        if not isinstance(error, KeyboardInterrupt):
            traceback.print_exc()
    finally:
        topology.close()
        meta["machine"] = report.machine()
        written = report.write(results, meta, args.out)
        print(report.markdown(written), flush=True)
        if args.keep or os.environ.get("CAIRN_FAULTS_KEEP"):
            print(f"logs and data kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
