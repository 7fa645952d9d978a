"""Where the write phase of an assembly goes: the context's write (with the assembly's log
entry) and the commit, per source tree, on a fresh copy of the benchmark corpus each run.

    .venv/bin/python benchmarks/write_phase.py --src /tmp/base/src --src ./src --rounds 2

Each run loads ``benchmarks/perf.py``'s corpus (from ``.cairn-bench/``) into a new embedded
PostgreSQL, then assembles ``--triggers`` triggers spread over the sessions, as the perf
benchmark does: every one is the first of its session, so every write creates its
``agent.context.v1`` record. Runs alternate between the source trees (``--src``, each
imported in a child process); medians per tree, and per write: this process's CPU, the
server process's CPU (its scheduler's count) and the WAL written (from
before the write to after its commit).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from proc_cpu import scheduled_s
from sqlalchemy import text

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cairn-bench"
OWNER = uuid.UUID("00000000-0000-0000-0000-000000000001")
WARMUP = 10


# The session's server process and the WAL position before the write; the WAL written
# since (by this database alone: the benchmark's own server).
_PROBE = text("SELECT pg_backend_pid(), pg_current_wal_insert_lsn()")
_WAL_SINCE = text("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), CAST(:lsn AS pg_lsn))")


async def _writes(database_url: str, events: list[dict[str, Any]]) -> list[Any]:
    from cairn.assemblies import entry as log
    from cairn.breadcrumbs.generated import GeneratedWriter
    from cairn.config import Settings
    from cairn.context.builder import ContextBuilder
    from cairn.context.explain import Timer
    from cairn.context.trigger import stored_trigger
    from cairn.context.write import write_context
    from cairn.db.engine import create_engine, create_session_factory, tenant_session
    from cairn.principal import Principal
    from cairn.transforms import Transforms
    from cairn.worker.app import NoEmbedder

    settings = Settings(database_url=database_url, data_dir=CACHE / "data")
    engine = create_engine(database_url, settings)
    sessions = create_session_factory(engine)
    builder = ContextBuilder.create(
        settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    rows: list[dict[str, float]] = []
    for n, event in enumerate(events):
        agents = [a for a in await builder.directory.agents(OWNER) if a.triggered_by(event)]
        for agent in agents:
            excluded = await builder.directory.excluded(OWNER)
            async with tenant_session(sessions, OWNER) as session, session.begin():
                backend, wal = (await session.execute(_PROBE)).one()
                timer = Timer()
                found = await stored_trigger(session, OWNER, uuid.UUID(event["breadcrumb_id"]))
                assert found is not None
                assembly = await builder._assemble(
                    session, agent, found, excluded, event_id=event["event_id"], timer=timer
                )
                principal = Principal(OWNER, f"context-builder:{agent.agent_id}")
                writer = GeneratedWriter(
                    session, builder.embedder, builder.limits, principal, builder.transforms
                )
                entry = log.entry_of(
                    OWNER, agent.agent_id, log.WORKER, assembly.context,
                    session_tag=assembly.session_tag, trigger_id=found.record.id,
                    timings_ms=timer.as_dict(),
                )  # fmt: skip
                cpu, server = time.process_time(), scheduled_s(backend)
                started = time.perf_counter()
                if hasattr(log, "written_with"):
                    rider = log.written_with(entry, started)
                    await write_context(writer, assembly, keep_versions=20, log=rider)
                else:  # the code before the log joined the write's statement
                    await write_context(writer, assembly, keep_versions=20)
                    await log.record_assembly(session, entry)
                written = time.perf_counter()
            committed = time.perf_counter()
            cpu, server = time.process_time() - cpu, scheduled_s(backend) - server
            async with sessions() as session:
                wal = (await session.execute(_WAL_SINCE, {"lsn": wal})).scalar_one()
            if n >= WARMUP:
                rows.append({
                    "write": (written - started) * 1e3, "commit": (committed - written) * 1e3,
                    "cpu": cpu * 1e3, "server_cpu": server * 1e3, "wal": float(wal),
                })  # fmt: skip
    await engine.dispose()
    return rows


def child(src: str) -> None:
    sys.path.insert(0, str(Path(src).resolve()))
    sys.path.insert(0, str(REPO / "benchmarks"))
    from perf import trigger_events
    from perfbench import corpus as corpus_module, load

    corpus = corpus_module.load_or_build(
        10_000, CACHE, REPO / ".cairn" / "models", unique_texts=10_000
    )
    events = trigger_events(corpus, ARGS.triggers + WARMUP)
    with load.services(CACHE / "run-write-phase") as services:
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        rows = asyncio.run(_writes(services.database_url, events))
    print(json.dumps(rows))


def main() -> None:
    samples: dict[str, list[dict[str, float]]] = {src: [] for src in ARGS.src}
    for round_ in range(ARGS.rounds):
        for src in ARGS.src:
            command = [sys.executable, __file__, "--child", src, "--triggers", str(ARGS.triggers)]
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            rows = json.loads(done.stdout.strip().splitlines()[-1])
            samples[src] += rows
            write = statistics.median(r["write"] for r in rows)
            print(f"round {round_ + 1} {src}: write + log p50 {write:.2f} ms", flush=True)
    print(
        "| tree | write + log p50 ms | commit p50 ms | write + log + commit p50 ms"
        " | client CPU p50 ms | server CPU p50 ms | WAL p50 KB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for src, rows in samples.items():
        write = statistics.median(r["write"] for r in rows)
        commit = statistics.median(r["commit"] for r in rows)
        both = statistics.median(r["write"] + r["commit"] for r in rows)
        cpu = statistics.median(r.get("cpu", 0.0) for r in rows)
        server = statistics.median(r.get("server_cpu", 0.0) for r in rows)
        wal = statistics.median(r.get("wal", 0.0) for r in rows) / 1024
        print(
            f"| {src} | {write:.2f} | {commit:.2f} | {both:.2f} | {cpu:.2f} | {server:.2f}"
            f" | {wal:.1f} |"
        )


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--src", action="append", default=[], help="a source tree (repeat)")
parser.add_argument("--rounds", type=int, default=2)
parser.add_argument("--triggers", type=int, default=80)
parser.add_argument("--child", default="")
ARGS = parser.parse_args()

if __name__ == "__main__":
    if ARGS.child:
        child(ARGS.child)
    else:
        main()
