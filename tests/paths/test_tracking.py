"""The worker's ``track_paths`` step against the real database and NATS: a session's records
become one debug path with its waypoints, once per record."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post
from tests.waiting import eventually

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.config import Settings
from cairn.context.builder import ContextBuilder
from cairn.db.engine import tenant_session
from cairn.edges.builder import CAUSAL, EdgeOptions
from cairn.events.payloads import ChangeKind, change_event
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder
from cairn.worker.handlers import Handlers

FAILING = {
    "command": "pytest -q",
    "exit_code": 1,
    "output": "FAILED tests/test_cart.py::test_total - AssertionError: assert 3 == 4\n"
    "1 failed, 2 passed in 0.12s",
}
GREEN = {"command": "pytest -q", "exit_code": 0, "output": "3 passed in 0.10s"}


def _edit(line: int) -> dict[str, Any]:
    return {"tool": "edit", "title": f"Edit src/cart.py line {line}", "text": "changed"}


async def _record(client: httpx.AsyncClient, session: str | None, context: dict[str, Any]) -> str:
    tags = [session] if session else ["no-session"]
    title = context.pop("title", "Run pytest")
    return str(await post(client, schema_name="tool.response.v1", title=title, tags=tags,
                          context=context))  # fmt: skip


async def _waypoints_from(db: AsyncEngine, source: str) -> list[Mapping[str, Any]]:
    query = text(
        "SELECT context FROM breadcrumbs WHERE schema_name = 'debug.waypoint.v1'"
        " AND context->>'source_record_id' = :source ORDER BY (context->>'sequence')::int"
    )
    async with db.connect() as connection:
        return [row.context for row in await connection.execute(query, {"source": source})]


async def _paths_of(db: AsyncEngine, session: str) -> list[Any]:
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.path.v1'"
        " AND context->>'session' = :session"
    )
    async with db.connect() as connection:
        return list(await connection.execute(query, {"session": session}))


async def _waypoints_of(db: AsyncEngine, path: uuid.UUID) -> list[Any]:
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.waypoint.v1'"
        " AND context->>'path_id' = :path ORDER BY (context->>'sequence')::int"
    )
    async with db.connect() as connection:
        return list(await connection.execute(query, {"path": str(path)}))


async def _handled(db: AsyncEngine, source: str, count: int = 1) -> None:
    async def made() -> bool:
        return len(await _waypoints_from(db, source)) >= count

    await eventually(made, timeout=30)


async def test_a_scripted_session_makes_one_resolved_path(
    worker: None, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    script = [FAILING, _edit(10), FAILING, _edit(12), GREEN, GREEN, GREEN]
    script = [dict(context) for context in script]
    sources = []
    for context in script:  # one at a time: the worker may handle a burst in any order
        sources.append(await _record(client, session, context))
        await _handled(db, sources[-1])
    await _handled(db, sources[-1], count=2)  # the last success resolves
    (path,) = await _paths_of(db, session)
    assert path.context["status"] == "resolved"
    waypoints = await _waypoints_of(db, path.id)
    assert [w.context["type"] for w in waypoints] == [
        "error", "attempt", "failure", "attempt", "success", "success", "success", "resolution",
    ]  # fmt: skip
    assert [w.context["sequence"] for w in waypoints] == list(range(1, 9))
    assert path.context["sequence"] == 8 and path.context["trigger_record_id"] == sources[0]
    assert "AssertionError" in path.context["root_cause"]
    assert path.context["what_fixed_it"] == "Edit src/cart.py line 12 (`edit`)"
    assert path.context["files"] == ["tests/test_cart.py", "src/cart.py"]
    assert path.context["kiss_summary"].startswith("When ")
    assert path.context["resolved_at"] is not None


async def test_a_waypoint_is_linked_to_its_source_and_path(
    worker: None, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    source = await _record(client, session, FAILING)
    await _handled(db, source)
    (path,) = await _paths_of(db, session)
    (waypoint,) = await _waypoints_of(db, path.id)
    query = text("SELECT from_id, to_id FROM breadcrumb_edges WHERE edge_type = :causal"
                 " AND (from_id = :w OR to_id = :w)")  # fmt: skip
    async with db.connect() as connection:
        edges = {
            tuple(r) for r in await connection.execute(query, {"w": waypoint.id, "causal": CAUSAL})
        }
    assert edges == {(uuid.UUID(source), waypoint.id), (waypoint.id, path.id)}


async def test_two_sessions_make_two_paths(
    worker: None, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    sessions = [f"session:{uuid.uuid4().hex[:8]}" for _ in range(2)]
    sources = [await _record(client, session, FAILING) for session in sessions]
    for source in sources:
        await _handled(db, source)
    paths = [await _paths_of(db, session) for session in sessions]
    assert [len(found) for found in paths] == [1, 1]
    assert paths[0][0].id != paths[1][0].id
    assert [found[0].context["status"] for found in paths] == ["active", "active"]


async def _event(app: FastAPI, record_id: str) -> dict[str, Any]:
    """The ``breadcrumb.created`` event of a stored record, as the worker receives it."""
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session:
        row = await breadcrumbs.get(session, owner, uuid.UUID(record_id))
    assert row is not None
    return change_event(ChangeKind.created, row, change="create").payload


async def test_a_redelivered_event_adds_no_waypoint(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    first = await _record(client, session, FAILING)
    await handlers.handle_event(await _event(app, first))
    event = await _event(app, await _record(client, session, _edit(3)))
    await handlers.handle_event(event)
    await handlers.handle_event(event)
    (path,) = await _paths_of(db, session)
    waypoints = await _waypoints_of(db, path.id)
    assert [w.context["type"] for w in waypoints] == ["error", "attempt"]
    assert path.context["sequence"] == 2


async def test_a_record_without_a_session_makes_no_path(
    handlers: Handlers, client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine
) -> None:
    source = await _record(client, None, FAILING)
    await handlers.track_paths(await _event(app, source))
    assert await _waypoints_from(db, source) == []


async def test_two_workers_handling_every_event_twice_number_waypoints_without_gaps(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    sessions = app.state.resources.session_factory
    workers = []
    for _ in range(2):
        builder = await asyncio.to_thread(
            ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
        )
        workers.append(Handlers(sessions, EdgeOptions(), builder))
    session = f"session:{uuid.uuid4().hex[:8]}"
    sources = [await _record(client, session, dict(FAILING)) for _ in range(8)]
    events = [await _event(app, source) for source in sources]
    await asyncio.gather(*(w.track_paths(e) for e in events for w in workers))
    (path,) = await _paths_of(db, session)
    waypoints = await _waypoints_of(db, path.id)
    assert [w.context["sequence"] for w in waypoints] == list(range(1, 9))
    assert sorted(w.context["source_record_id"] for w in waypoints) == sorted(sources)
    assert sorted(w.context["type"] for w in waypoints) == ["error"] + ["failure"] * 7
    assert path.context["sequence"] == 8


async def test_the_redelivery_check_probes_its_index(db: AsyncEngine) -> None:
    """A redelivered record is recognised by the derived ids its waypoints would have (the
    redelivery itself: test_a_redelivered_event_adds_no_waypoint): an index probe, never a
    scan of the table. On an empty tenant the planner may take an owner-prefixed index and
    filter by id; with the tenant's waypoints counted it takes the primary key."""
    query = (
        "EXPLAIN SELECT 1 FROM breadcrumbs WHERE owner_id = :owner AND id = ANY(:ids)"
        " AND schema_name = 'debug.waypoint.v1'"
    )
    async with db.connect() as connection:
        await connection.execute(text("SET LOCAL enable_seqscan = off"))
        params = {"owner": uuid.uuid4(), "ids": [uuid.uuid4() for _ in range(9)]}
        plan = "\n".join(row[0] for row in await connection.execute(text(query), params))
    assert "Seq Scan" not in plan and "Index" in plan, plan
