"""What debug-path tracking costs the worker per created record: ``Handlers.track_paths``
timed on every created record of a realistic mix, and the whole created-event handling
with the step against without it.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/debug_paths_overhead.py --records 10000

Starts its own PostgreSQL (with the migrations, through the app's startup) and no NATS; the
records are posted through ``POST /breadcrumbs/batch`` with the in-memory hash embedder (no
encoder on the cores), and the worker's handlers are called in process, as the worker's
consumer calls them, right after each batch is written (arrival order, as a live worker sees
it). The records are spread over ``--sessions`` sessions (default one per 50 records:
200 at 10k; ``session:*`` tags), CONCURRENT of them posting at a time, interleaved; each
session is a run of the hand-written debugging sessions of ``quality/debug_paths`` (tool
output of pytest, cargo, go, jest, docker, ...) between stretches of plain work: notes,
reads and edits, commands that print no test output. Sessions
alternate between two arms: with the step (refresh, edges, track_paths, assembly) and
without it (the same minus track_paths), so the two are measured on the same kind of
records at the same time. Each step is timed on its own.

The step's own writes (waypoints, paths) are records too: their events reach the worker
like any other; they are handled and timed after the run and added to the overhead.

Reported per arm and per kind of record: no signal (``classify`` finds nothing: the step
returns before any query), a signal that changes no path (e.g. a green run with no path
open: one transaction, the session lock and two lookups), and a record that writes
waypoints (and, when it resolves, the summary). Results: benchmarks/results/
debug_paths_overhead.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "quality"))
from server import source_state, write_report  # noqa: E402

from cairn.api.app import create_app  # noqa: E402
from cairn.breadcrumbs import repository as breadcrumbs  # noqa: E402
from cairn.config import ProcessingSettings, Settings  # noqa: E402
from cairn.context.builder import ContextBuilder  # noqa: E402
from cairn.db.engine import tenant_session  # noqa: E402
from cairn.db.roles import DEFAULT_APP_ROLE  # noqa: E402
from cairn.edges.builder import EdgeOptions  # noqa: E402
from cairn.embedding import HashEmbedder  # noqa: E402
from cairn.events.outbox import published_body  # noqa: E402
from cairn.events.payloads import ChangeKind, change_event  # noqa: E402
from cairn.paths.signals import Kind, classify  # noqa: E402
from cairn.runtime import EmbeddedPostgres  # noqa: E402
from cairn.transforms import Transforms  # noqa: E402
from cairn.worker.app import NoEmbedder  # noqa: E402
from cairn.worker.handlers import Handlers  # noqa: E402

CORPORA = [HERE / "quality" / "debug_paths" / n for n in ("sessions.json", "heldout.json")]
RESULTS = HERE / "results" / "debug_paths_overhead"
BATCH = 100  # records posted, then handled, at a time
CONCURRENT = 20  # sessions posting at the same time
WARMUP = BATCH  # records handled first (the first batch), not counted
SEED = 18

Record = dict[str, Any]

NOTES = [
    "Reading the config loader next; the env override order looks odd.",
    "Plan: split the importer into parse and load, then add the CSV dialect option.",
    "The retry policy lives in client.py; three attempts with jitter.",
    "Next: pagination cursor for the runs endpoint.",
    "Docs for the export command need the new --since flag.",
]
FILES = ["src/app/config.py", "src/app/importer.py", "README.md", "src/app/client.py",
         "tests/test_importer.py", "internal/api/routes.go", "web/src/pages/Runs.tsx"]  # fmt: skip
QUIET_COMMANDS = [
    ("git status --short", " M src/app/importer.py\n"),
    ("ls src/app", "__init__.py\nclient.py\nconfig.py\nimporter.py\n"),
    ("git log --oneline -3", "a1b2c3d importer: split\n9f8e7d6 docs\n5a4b3c2 client: retry"),
    ("wc -l src/app/importer.py", "212 src/app/importer.py"),
    ("cat pyproject.toml | head -5", '[project]\nname = "app"\nversion = "0.4.0"'),
]


def plain(rng: random.Random) -> tuple[Record, str]:
    """A record of plain work: no error and no test output."""
    roll = rng.random()
    if roll < 0.3:
        body = rng.choice(NOTES)
        record = {"schema_name": "agent.note.v1", "title": body[:60], "tags": ["note"],
                  "context": {"content": body}}  # fmt: skip
        return record, "note"
    if roll < 0.65:
        tool, path = rng.choice(["read_file", "edit_file", "grep"]), rng.choice(FILES)
        record = {"schema_name": "tool.call.v1", "title": f"{tool} {path}",
                  "tags": [f"tool:{tool}"], "context": {"tool": tool, "path": path}}  # fmt: skip
        return record, "tool call"
    command, output = rng.choice(QUIET_COMMANDS)
    record = {"schema_name": "tool.response.v1", "title": f"ran {command}", "tags": ["tool:shell"],
              "context": {"command": command, "exit_code": 0, "output": output}}  # fmt: skip
    return record, "quiet response"


def scripted() -> list[list[tuple[Record, str]]]:
    """The debugging sessions of both corpora: each record with what it is (by the corpus's
    annotation: an error, a test or other success output, or plain work)."""
    out = []
    for corpus in CORPORA:
        for session in json.loads(corpus.read_text()):
            out.append([(step["record"], _kind_of(step)) for step in session["steps"]])
    return out


def _kind_of(step: dict[str, Any]) -> str:
    if {"error", "failure", "pivot"} & set(step["expect"]):
        return "error output"
    if step["record"]["schema_name"] == "tool.response.v1":
        return "test or success output" if "success" in step["expect"] else "quiet response"
    return "note" if step["record"]["schema_name"] == "agent.note.v1" else "tool call"


def sessions(records: int, count: int, rng: random.Random) -> list[list[tuple[Record, str]]]:
    """``count`` sessions of about ``records / count`` records: scripted debugging runs
    between stretches of plain work, about a quarter of the records being error or test
    output."""
    scripts = scripted()
    per = max(1, records // count)
    out: list[list[tuple[Record, str]]] = []
    for index in range(count):
        size = per + (1 if index < records - per * count else 0)
        body: list[tuple[Record, str]] = []
        while len(body) < size:
            if rng.random() < 0.4:
                body += rng.choice(scripts)
            else:
                body += [plain(rng) for _ in range(rng.randint(4, 12))]
        tag = f"session:bench-{index:04d}"
        out.append([({**r, "tags": [*r["tags"], tag]}, kind) for r, kind in body[:size]])
    return out


def arrival(all_sessions: list[list[tuple[Record, str]]], rng: random.Random) -> list[Any]:
    """(session index, record, kind) in the order the server receives them: CONCURRENT
    sessions at a time, each posting its next record in turn."""
    order, queue, live = [], list(range(len(all_sessions))), []
    cursor = [0] * len(all_sessions)
    while queue or live:
        while queue and len(live) < CONCURRENT:
            live.append(queue.pop(0))
        index = rng.choice(live)
        record, kind = all_sessions[index][cursor[index]]
        order.append((index, record, kind))
        cursor[index] += 1
        if cursor[index] == len(all_sessions[index]):
            live.remove(index)
    return order


def stats(samples: list[float]) -> dict[str, Any]:
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def pct(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"n": len(ordered), "mean": round(statistics.fmean(ordered), 3), "p50": pct(0.5),
            "p90": pct(0.9), "p99": pct(0.99), "max": round(ordered[-1], 3)}  # fmt: skip


async def _timed(step: Callable[[dict[str, Any]], Awaitable[None]], event: dict[str, Any]) -> float:
    started = time.perf_counter()
    await step(event)
    return 1000 * (time.perf_counter() - started)


async def measure(settings: Settings, records: int, session_count: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    warm = sessions(WARMUP, 2, rng)
    body = sessions(records, session_count, rng)
    order = arrival(warm, rng) + [(i + len(warm), r, k) for i, r, k in arrival(body, rng)]
    app = create_app(settings, embedder=HashEmbedder())
    async with app.router.lifespan_context(app):
        resources = app.state.resources
        factory, owner = resources.session_factory, resources.default_tenant
        builder = await asyncio.to_thread(
            ContextBuilder.create, settings, factory, Transforms(settings.transforms), NoEmbedder()
        )
        handlers = Handlers(factory, EdgeOptions(), builder,
                            path_threshold=settings.paths.resolution_threshold)  # fmt: skip
        samples: list[dict[str, Any]] = []
        warmed = 0
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=600) as c:
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                answer = await c.post(
                    "/breadcrumbs/batch", json={"records": [r for _, r, _ in chunk]}
                )
                answer.raise_for_status()
                ids = [uuid.UUID(item["id"]) for item in answer.json()["results"]]
                async with tenant_session(factory, owner) as session:
                    rows = [await breadcrumbs.get(session, owner, i) for i in ids]
                for (index, _, kind), row in zip(chunk, rows, strict=True):
                    assert row is not None
                    event = change_event(ChangeKind.created, row, change="create").payload
                    with_step = index % 2 == 0
                    times = {"refresh_caches": await _timed(handlers.refresh_caches, event),
                             "build_edges": await _timed(handlers.build_edges, event)}  # fmt: skip
                    if with_step:
                        times["track_paths"] = await _timed(handlers.track_paths, event)
                    times["assemble"] = await _timed(handlers.assemble, event)
                    signal = classify(event).kind
                    samples.append({"id": str(row["id"]), "kind": kind, "times": times,
                                    "arm": "with" if with_step else "without",
                                    "signal": signal is not Kind.NONE,
                                    "signal_kind": signal.value})  # fmt: skip
                if start == 0:  # the warm-up batch: its follow-on events are not counted
                    warmed = await _outbox_end(resources.system_sessions)
        async with tenant_session(factory, owner) as session:
            made = await _paths_made(session, owner)
        follow_on = await _follow_on(resources.system_sessions, handlers, warmed)
    return report(samples[WARMUP:], made, follow_on, records, session_count)


async def _outbox_end(system: Any) -> int:
    async with system() as session:
        return int(
            (await session.execute(text("SELECT coalesce(max(id), 0) FROM outbox"))).scalar()
        )


async def _follow_on(system: Any, handlers: Handlers, after: int) -> list[float]:
    """The events the step's own writes cause (each waypoint created, each path created or
    updated goes through the outbox to the worker like any record), handled and timed here
    after the run (live, they interleave with the rest)."""
    query = text(
        "SELECT payload::text AS payload, context::text AS context FROM outbox"
        " WHERE id > :after AND payload->>'schema_name'"
        " IN ('debug.path.v1', 'debug.waypoint.v1') ORDER BY id"
    )
    async with system() as session:
        rows = await session.execute(query, {"after": after})
        events = [json.loads(published_body(row.payload, row.context)) for row in rows]
    return [await _timed(handlers.handle_event, event) for event in events]


async def _paths_made(session: Any, owner: uuid.UUID) -> dict[str, Any]:
    """Which records got a waypoint, and the paths by status."""
    query = text(
        "SELECT schema_name, context->>'source_record_id' AS source, context->>'status' AS status"
        " FROM breadcrumbs WHERE owner_id = :owner"
        " AND schema_name IN ('debug.waypoint.v1', 'debug.path.v1')"
    )
    rows = list(await session.execute(query, {"owner": owner}))
    return {
        "sources": {r.source for r in rows if r.schema_name == "debug.waypoint.v1"},
        "paths": dict(Counter(r.status for r in rows if r.schema_name == "debug.path.v1")),
        "waypoints": sum(r.schema_name == "debug.waypoint.v1" for r in rows),
    }


def report(
    samples: list[dict[str, Any]],
    made: dict[str, Any],
    follow_on: list[float],
    records: int,
    session_count: int,
) -> dict[str, Any]:
    def group(sample: dict[str, Any]) -> str:
        if not sample["signal"]:
            return "no signal"
        return "waypoint written" if sample["id"] in made["sources"] else "signal, no waypoint"

    with_arm = [s for s in samples if s["arm"] == "with"]
    without_arm = [s for s in samples if s["arm"] == "without"]
    track = {"all": stats([s["times"]["track_paths"] for s in with_arm])}
    track["signal"] = stats([s["times"]["track_paths"] for s in with_arm if s["signal"]])
    for name in ("no signal", "signal, no waypoint", "waypoint written"):
        track[name] = stats([s["times"]["track_paths"] for s in with_arm if group(s) == name])

    def total(arm: list[dict[str, Any]], only: str | None = None) -> dict[str, Any]:
        """The handling time of each record of ``arm`` (of kind ``only``): its steps' sum."""
        return stats([sum(s["times"].values()) for s in arm if only is None or group(s) == only])

    handling = {"with track_paths": total(with_arm), "without track_paths": total(without_arm)}
    for name in ("no signal", "signal"):
        for arm_name, arm in (("with", with_arm), ("without", without_arm)):
            picked = [s for s in arm if s["signal"] == (name == "signal")]
            handling[f"{arm_name}, {name}"] = total(picked)
    for name in ("signal, no waypoint", "waypoint written"):
        handling[f"with, {name}"] = total(with_arm, name)
    steps = {
        step: stats([s["times"][step] for s in with_arm])
        for step in ("refresh_caches", "build_edges", "track_paths", "assemble")
    }
    mean_with = handling["with track_paths"].get("mean", 0.0)
    mean_without = handling["without track_paths"].get("mean", 0.0)
    mix = Counter(s["kind"] for s in samples)
    return {
        "commit": source_state(),
        "records": records,
        "sessions": session_count,
        "measured": {"with": len(with_arm), "without": len(without_arm)},
        "mix": {k: round(v / len(samples), 3) for k, v in sorted(mix.items())},
        "signal_share": round(sum(s["signal"] for s in samples) / len(samples), 3),
        "signal_kinds": dict(Counter(s["signal_kind"] for s in samples).most_common()),
        "kinds_with_step": dict(Counter(group(s) for s in with_arm)),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "paths": made["paths"],
        "waypoints": made["waypoints"],
        "track_paths_ms": track,
        "handling_ms": handling,
        "steps_with_ms": steps,
        "follow_on_events_ms": stats(follow_on),
        "follow_on_events_per_record": round(len(follow_on) / max(1, len(with_arm)), 3),
        "overhead_mean_ms": round(mean_with - mean_without, 3),
        "overhead_with_follow_on_mean_ms": round(
            mean_with - mean_without + sum(follow_on) / max(1, len(with_arm)), 3
        ),
        "overhead_mean_share": round((mean_with - mean_without) / mean_without, 3)
        if mean_without
        else None,
        "settings": {
            "batch": BATCH,
            "concurrent_sessions": CONCURRENT,
            "warmup": WARMUP,
            "seed": SEED,
            "embedder": "hash (in-memory)",
            "nats": False,
        },
    }


def table(result: dict[str, Any]) -> str:
    def row(name: str, s: dict[str, Any]) -> str:
        if not s.get("n"):
            return f"| {name} | 0 | | | | | |"
        return (f"| {name} | {s['n']} | {s['mean']:.2f} | {s['p50']:.2f} | {s['p90']:.2f} |"
                f" {s['p99']:.2f} | {s['max']:.2f} |")  # fmt: skip

    head = ["| records | n | mean | p50 | p90 | p99 | max |", "|---|---|---|---|---|---|---|"]
    return "\n".join([
        "# Debug paths: worker overhead per created record",
        "",
        f"Commit {result['commit']}; {result['records']} records in {result['sessions']}"
        f" sessions ({result['measured']['with']} handled with the step,"
        f" {result['measured']['without']} without); records with a path signal:"
        f" {result['signal_share']:.0%}; mix {json.dumps(result['mix'])};"
        f" paths made {json.dumps(result['paths'])}, {result['waypoints']} waypoints;"
        f" signals {json.dumps(result['signal_kinds'])}; load average at the end"
        f" {result['load_average']}."
        " In-process handlers on embedded PostgreSQL, hash embedder, no NATS. Milliseconds.",
        "",
        "## `Handlers.track_paths`",
        "",
        *head,
        *(row(name, s) for name, s in result["track_paths_ms"].items()),
        "",
        "## Whole created-event handling (refresh, edges, [track_paths], assembly)",
        "",
        *head,
        *(row(name, s) for name, s in result["handling_ms"].items()),
        "",
        f"Mean overhead of the step: {result['overhead_mean_ms']:.2f} ms per created record"
        f" ({result['overhead_mean_share']:.0%} of the handling without it).",
        "",
        "## Follow-on events: the step's own writes handled by the worker",
        "",
        f"{result['follow_on_events_ms'].get('n', 0)} events"
        f" ({result['follow_on_events_per_record']:.2f} per record handled with the step);"
        " mean overhead per created record with them:"
        f" {result['overhead_with_follow_on_mean_ms']:.2f} ms. The handling of those events"
        " (waypoints and paths, created or updated):",
        "",
        *head,
        row("follow-on events", result["follow_on_events_ms"]),
        "",
        "## Each step, arm with the step",
        "",
        *head,
        *(row(name, s) for name, s in result["steps_with_ms"].items()),
        "",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, help="default: one per 50 records")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="cairn-paths-overhead-"))
    postgres = EmbeddedPostgres(root / "postgres", fast=True)
    postgres.start()
    try:
        settings = Settings(
            data_dir=root / "data",
            admin_database_url=postgres.url,
            database_url=postgres.url_for(DEFAULT_APP_ROLE),
            processing=ProcessingSettings(retry_interval_s=3600),
            log_level="WARNING",
        )
        count = args.sessions or max(2, args.records // 50)
        result = asyncio.run(measure(settings, args.records, count))
    finally:
        postgres.stop()
    write_report(args.out, result, table(result))


if __name__ == "__main__":
    main()
