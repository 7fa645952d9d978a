"""A session's records tracked in any order of arrival (two workers, redelivery) make the
same paths and waypoints as in the order they were created: real database, through
``Handlers.track_paths``."""

from __future__ import annotations

import itertools
import random
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.paths.test_tracking import FAILING, GREEN, _edit, _event, _paths_of, _record

from cairn.edges.builder import CAUSAL
from cairn.worker.handlers import Handlers

OTHER_ERROR = {
    "command": "python export.py",
    "exit_code": 1,
    "output": "Traceback (most recent call last):\nKeyError: 'total'",
}
# Two paths: the first pivots twice (a problem resets its successes) and resolves;
# the second stays active.
SCRIPT = [
    FAILING, _edit(10), OTHER_ERROR, GREEN, GREEN, FAILING, _edit(12), GREEN, GREEN, GREEN,
    {"title": "ls", "command": "ls", "exit_code": 0, "output": "src tests"},
    FAILING, _edit(20), GREEN,
]  # fmt: skip

# What SCRIPT makes in order: each path's status and waypoint types.
TRACKED = [
    ("resolved", ["error", "attempt", "pivot", "success", "success", "pivot", "attempt",
                  "success", "success", "success", "resolution"]),
    ("active", ["error", "attempt", "success"]),
]  # fmt: skip


async def _session(
    client: httpx.AsyncClient, app: FastAPI
) -> tuple[str, list[str], list[dict[str, Any]]]:
    session = f"session:{uuid.uuid4().hex[:8]}"
    sources = [await _record(client, session, dict(context)) for context in SCRIPT]
    return session, sources, [await _event(app, source) for source in sources]


async def _shape(db: AsyncEngine, session: str, sources: list[str]) -> list[Any]:
    """The session's paths and waypoints with its record ids replaced by their positions."""
    index = {source: n for n, source in enumerate(sources)}
    created = text("SELECT id, created_at FROM breadcrumbs WHERE id = ANY(:ids)")
    async with db.connect() as connection:
        rows = await connection.execute(created, {"ids": [uuid.UUID(s) for s in sources]})
        when = {row.created_at.isoformat(): index[str(row.id)] for row in rows}
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.waypoint.v1'"
        " AND context->>'path_id' = :path ORDER BY (context->>'sequence')::int"
    )
    edges = text("SELECT from_id, to_id FROM breadcrumb_edges WHERE edge_type = :causal"
                 " AND (from_id = ANY(:ids) OR to_id = ANY(:ids))")  # fmt: skip
    shape = []
    for path in sorted(await _paths_of(db, session), key=lambda p: p.context["started_at"]):
        context = dict(path.context)
        context["trigger_record_id"] = index[context["trigger_record_id"]]
        for key in ("started_at", "last_at", "resolved_at"):  # the records they date from
            context[key] = when.get(context[key])
        del context["session"]
        async with db.connect() as connection:
            waypoints = list(await connection.execute(query, {"path": str(path.id)}))
            ids = [w.id for w in waypoints]
            linked = set(await connection.execute(edges, {"ids": ids, "causal": CAUSAL}))
        expected = {(uuid.UUID(w.context["source_record_id"]), w.id) for w in waypoints}
        assert linked == expected | {(w.id, path.id) for w in waypoints}
        steps = [
            (w.context["sequence"], w.context["type"], w.context["summary"],
             index[w.context["source_record_id"]])
            for w in waypoints
        ]  # fmt: skip
        shape.append((context, steps))
    return shape


async def test_any_order_of_arrival_makes_the_paths_of_the_order_of_creation(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    session, sources, events = await _session(client, app)
    for event in events:
        await handlers.track_paths(event)
    in_order = await _shape(db, session, sources)
    assert [(c["status"], [s[1] for s in steps]) for c, steps in in_order] == TRACKED
    assert [(c["started_at"], c["last_at"], c["resolved_at"]) for c, _ in in_order] == [
        (0, 9, 9),
        (11, 13, None),
    ]  # dated by their records' creation
    orders = [list(reversed(range(len(SCRIPT))))]
    orders += [random.Random(seed).sample(range(len(SCRIPT)), len(SCRIPT)) for seed in (1, 2)]
    for order in orders:
        session, sources, events = await _session(client, app)
        for n in order + order[:3]:  # and a few redelivered
            await handlers.track_paths(events[n])
        assert await _shape(db, session, sources) == in_order, order


async def test_a_record_one_or_two_places_late_makes_the_paths_of_the_order_of_creation(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    """Each record arriving one or two places after its turn, the rest in order and none
    redelivered. A path's first record arriving after the next one is the hard case: that
    one found no path to join, and no record after it arrives late to replay the path."""
    session, sources, events = await _session(client, app)
    for event in events:
        await handlers.track_paths(event)
    in_order = await _shape(db, session, sources)
    for late, by in itertools.product(range(len(SCRIPT)), (1, 2)):
        if late + by >= len(SCRIPT):
            continue
        order = list(range(len(SCRIPT)))
        order.insert(late + by, order.pop(late))
        session, sources, events = await _session(client, app)
        for n in order:
            await handlers.track_paths(events[n])
        assert await _shape(db, session, sources) == in_order, order


async def test_a_session_imported_in_one_batch_is_tracked_in_the_requests_order(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    """One transaction, one ``now()``: the batch's own stamps (a microsecond apart) order it,
    however its events arrive."""
    session = f"session:{uuid.uuid4().hex[:8]}"
    records = []
    for context in map(dict, SCRIPT):
        title = context.pop("title", "Run pytest")
        records.append({"schema_name": "tool.response.v1", "title": title, "tags": [session],
                        "context": context})  # fmt: skip
    answer = await client.post("/breadcrumbs/batch", json={"records": records})
    assert answer.status_code == 200, answer.text
    sources = [result["id"] for result in answer.json()["results"]]
    for source in reversed(sources):
        await handlers.track_paths(await _event(app, source))
    shape = await _shape(db, session, sources)
    assert [(c["status"], [s[1] for s in steps]) for c, steps in shape] == TRACKED
    assert [steps[0][3] for _, steps in shape] == [0, 11]


async def test_the_latest_path_query_probes_its_index(db: AsyncEngine) -> None:
    """A tracked record of a session without an active path reads the paths written since
    it was created: through a partial index of debug paths by plain columns (usable under
    row-level security; 0019's by updated_at, or 0021's when the planner prefers it), never
    a scan of the tenant's records."""
    query = (
        "EXPLAIN SELECT id FROM breadcrumbs WHERE owner_id = :owner AND updated_at >= now()"
        " AND schema_name = 'debug.path.v1' AND context->>'session' = :session"
    )
    async with db.connect() as connection:
        await connection.execute(text("SET LOCAL enable_seqscan = off"))
        params = {"owner": uuid.uuid4(), "session": "session:s"}
        plan = "\n".join(row[0] for row in await connection.execute(text(query), params))
    assert "using ix_debug_paths_" in plan, plan


async def test_a_late_record_leaves_an_explicitly_started_path_as_the_agent_made_it(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    """Its first waypoint has no record to replay: the replay must neither drop the path
    nor trip over the sourceless waypoint; the record that came late is not tracked."""
    session = f"session:{uuid.uuid4().hex[:8]}"
    early = await _record(client, session, dict(_edit(1)))
    started = await client.post("/paths", json={"session": session, "summary": "export hangs"})
    assert started.status_code == 201, started.text
    path_id = started.json()["path"]["id"]
    later = await _record(client, session, dict(FAILING))
    await handlers.track_paths(await _event(app, later))
    await handlers.track_paths(await _event(app, early))  # created before the path's last step
    shown = (await client.get(f"/paths/{path_id}")).json()
    assert shown["path"]["status"] == "active"
    assert [(w["type"], w["source_record_id"]) for w in shown["waypoints"]] == [
        ("error", None),
        ("pivot", later),
    ]
    assert [p.id for p in await _paths_of(db, session)] == [uuid.UUID(path_id)]
