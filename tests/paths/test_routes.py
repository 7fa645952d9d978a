"""``/paths`` against the real database and worker: detected paths are listed and shown with
their waypoints in order; an agent starts, resolves and abandons paths explicitly; bad
requests get a 4xx and change nothing."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post
from tests.paths.test_tracking import FAILING
from tests.waiting import eventually

from cairn.edges.builder import CAUSAL
from cairn.paths.queries import PathFilter, list_query


def _session() -> str:
    return f"session:{uuid.uuid4().hex[:8]}"


async def _record(client: httpx.AsyncClient, session: str, title: str, **context: Any) -> str:
    return str(await post(client, schema_name="tool.response.v1", title=title, tags=[session],
                          context=context))  # fmt: skip


async def _path_with(client: httpx.AsyncClient, session: str, waypoints: int) -> dict[str, Any]:
    """The session's one path once it has ``waypoints`` waypoints."""
    found: dict[str, Any] = {}

    async def grown() -> bool:
        listed = (await client.get("/paths", params={"session": session})).json()
        found.update(listed[0] if listed else {})
        return bool(listed) and listed[0]["sequence"] >= waypoints

    await eventually(grown, timeout=30)
    return found


async def _start(client: httpx.AsyncClient, session: str, **extra: Any) -> dict[str, Any]:
    body = {"session": session, "summary": "export job hangs after 10 minutes", **extra}
    response = await client.post("/paths", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_detected_path_is_listed_and_shown_with_its_waypoints_in_order(
    worker: None, client: httpx.AsyncClient
) -> None:
    session = _session()
    sources = [await _record(client, session, "Run pytest", **FAILING)]
    await _path_with(client, session, 1)  # one at a time: the worker orders a session's burst
    sources.append(await _record(client, session, "Edit src/cart.py", tool="edit"))
    await _path_with(client, session, 2)
    sources.append(await _record(client, session, "Run pytest again", **FAILING))
    listed = await _path_with(client, session, 3)
    assert listed["status"] == "active" and listed["trigger_record_id"] == sources[0]
    shown = (await client.get(f"/paths/{listed['id']}")).json()
    assert shown["path"] == listed
    waypoints = shown["waypoints"]
    assert [w["type"] for w in waypoints] == ["error", "attempt", "failure"]
    assert [w["sequence"] for w in waypoints] == [1, 2, 3]
    assert [w["source"]["id"] for w in waypoints] == sources
    assert waypoints[1]["source"] == {
        "id": sources[1], "title": "Edit src/cart.py", "schema_name": "tool.response.v1",
    }  # fmt: skip
    active = (await client.get("/paths/active", params={"session": session})).json()
    assert active == shown


async def test_an_explicit_path_starts_resolves_with_the_agents_fix_and_stays_resolved(
    client: httpx.AsyncClient,
) -> None:
    session = _session()
    started = await _start(client, session.removeprefix("session:"), signature="Hang: <n>")
    path = started["path"]
    assert (path["session"], path["status"], path["trigger_record_id"]) == (
        session, "active", None,
    )  # fmt: skip
    (first,) = started["waypoints"]
    assert (first["type"], first["summary"], first["source"]) == (
        "error", "export job hangs after 10 minutes", None,
    )  # fmt: skip
    again = await client.post("/paths", json={"session": session, "summary": "another"})
    assert again.status_code == 409 and again.json()["path_id"] == path["id"]

    fix = "stream the rows instead of loading them all"
    response = await client.post(f"/paths/{path['id']}/resolve", json={"what_fixed_it": fix})
    assert response.status_code == 200, response.text
    resolved = response.json()
    assert resolved["path"]["status"] == "resolved"
    assert resolved["path"]["what_fixed_it"] == fix
    assert resolved["path"]["root_cause"] == "export job hangs after 10 minutes"
    assert resolved["path"]["kiss_summary"] == f"When export job hangs after 10 minutes: {fix}."
    assert [w["type"] for w in resolved["waypoints"]] == ["error", "resolution"]
    assert resolved["path"]["sequence"] == 2
    for action in ("resolve", "abandon"):
        refused = await client.post(f"/paths/{path['id']}/{action}", json={})
        assert refused.status_code == 409, refused.text
        assert "resolved" in refused.json()["detail"]
    assert (await client.get(f"/paths/{path['id']}")).json() == resolved


async def test_explicit_waypoints_are_linked_to_their_path(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    path = (await _start(client, _session()))["path"]
    await client.post(f"/paths/{path['id']}/resolve", json={})
    shown = (await client.get(f"/paths/{path['id']}")).json()
    query = text("SELECT from_id FROM breadcrumb_edges WHERE to_id = :path AND edge_type = :c")
    async with db.connect() as connection:
        rows = await connection.execute(query, {"path": path["id"], "c": CAUSAL})
        linked = {str(row.from_id) for row in rows}
    assert linked == {w["id"] for w in shown["waypoints"]} and len(linked) == 2


async def test_an_abandoned_path_keeps_its_reason_and_the_session_may_start_again(
    client: httpx.AsyncClient,
) -> None:
    session = _session()
    path = (await _start(client, session))["path"]
    response = await client.post(f"/paths/{path['id']}/abandon", json={"reason": "out of time"})
    assert response.status_code == 200, response.text
    assert response.json()["path"]["status"] == "abandoned"
    assert response.json()["path"]["abandon_reason"] == "out of time"
    assert response.json()["path"]["abandoned_at"] is not None
    assert (await client.get("/paths/active", params={"session": session})).json() is None
    second = (await _start(client, session))["path"]
    listed = (await client.get("/paths", params={"session": session})).json()
    assert [p["id"] for p in listed] == [second["id"], path["id"]]  # the latest first
    active = await client.get("/paths", params={"session": session, "status": "active"})
    assert [p["id"] for p in active.json()] == [second["id"]]
    limited = await client.get("/paths", params={"session": session, "limit": 1})
    assert [p["id"] for p in limited.json()] == [second["id"]]


async def test_the_worker_goes_on_from_an_explicitly_started_path(
    worker: None, client: httpx.AsyncClient
) -> None:
    session = _session()
    path = (await _start(client, session))["path"]
    source = await _record(client, session, "Run pytest", **FAILING)
    grown = await _path_with(client, session, 2)
    assert grown["id"] == path["id"]
    shown = (await client.get(f"/paths/{path['id']}")).json()
    assert [w["type"] for w in shown["waypoints"]] == ["error", "pivot"]
    assert shown["waypoints"][1]["source_record_id"] == source


async def test_resolving_a_detected_path_extracts_the_fix_from_its_waypoints(
    worker: None, client: httpx.AsyncClient
) -> None:
    session = _session()
    await _record(client, session, "Run pytest", **FAILING)
    await _path_with(client, session, 1)
    await _record(client, session, "Edit src/cart.py line 12", tool="edit")
    path = await _path_with(client, session, 2)
    response = await client.post(f"/paths/{path['id']}/resolve", json={})
    assert response.status_code == 200, response.text
    resolved = response.json()["path"]
    assert "AssertionError" in resolved["root_cause"]
    assert resolved["what_fixed_it"] == "Edit src/cart.py line 12 (`edit`)"
    assert "src/cart.py" in resolved["files"]


@pytest.mark.parametrize("action", ["resolve", "abandon"])
async def test_an_unknown_path_is_404(client: httpx.AsyncClient, action: str) -> None:
    unknown = uuid.uuid4()
    assert (await client.get(f"/paths/{unknown}")).status_code == 404
    response = await client.post(f"/paths/{unknown}/{action}", json={})
    assert response.status_code == 404, response.text


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("GET", "/paths/not-an-id", None),
        ("GET", "/paths?status=maybe", None),
        ("GET", "/paths?limit=0", None),
        ("GET", "/paths?session=two%20words", None),
        ("GET", "/paths/active", None),
        ("POST", "/paths", {"session": "session:bad-{s}"}),
        ("POST", "/paths", {"session": "session:bad-{s}", "summary": ""}),
        ("POST", "/paths", {"session": "has space {s}", "summary": "x"}),
        ("POST", "/paths", {"session": "session:bad-{s}", "summary": "x", "signature": 7}),
        ("POST", "/paths/{id}/resolve", {"what_fixed_it": "x" * 1001}),
        ("POST", "/paths/{id}/abandon", {"reason": ["not", "text"]}),
    ],
)
async def test_bad_input_is_422_and_changes_nothing(
    client: httpx.AsyncClient, method: str, url: str, body: dict[str, Any] | None
) -> None:
    session = _session()
    path = (await _start(client, session))["path"]
    marker = uuid.uuid4().hex[:8]
    if body is not None:
        body = {k: v.format(s=marker) if isinstance(v, str) else v for k, v in body.items()}
    response = await client.request(method, url.format(id=path["id"]), json=body)
    assert response.status_code == 422, response.text
    assert (await client.get("/paths", params={"session": f"bad-{marker}"})).json() == []
    shown = (await client.get(f"/paths/{path['id']}")).json()
    assert shown["path"]["status"] == "active" and len(shown["waypoints"]) == 1


async def test_listing_paths_reads_its_index(db: AsyncEngine) -> None:
    query, params = list_query(uuid.uuid4(), PathFilter(status="resolved", limit=20))
    async with db.connect() as connection:
        await connection.execute(text("SET LOCAL enable_seqscan = off"))
        rows = await connection.execute(text(f"EXPLAIN {query.text}"), params)
        plan = "\n".join(row[0] for row in rows)
    assert "ix_debug_paths_started" in plan


async def test_concurrent_starts_of_one_session_make_one_path(client: httpx.AsyncClient) -> None:
    session = _session()
    body = {"session": session, "summary": "two agents at once"}
    answers = await asyncio.gather(*(client.post("/paths", json=body) for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [201, 409, 409, 409]
    assert len((await client.get("/paths", params={"session": session})).json()) == 1


async def test_a_path_resolved_and_abandoned_at_once_ends_one_way(
    client: httpx.AsyncClient,
) -> None:
    path = (await _start(client, _session()))["path"]
    resolve, abandon = await asyncio.gather(
        client.post(f"/paths/{path['id']}/resolve", json={}),
        client.post(f"/paths/{path['id']}/abandon", json={}),
    )
    assert sorted([resolve.status_code, abandon.status_code]) == [200, 409]
    winner = resolve if resolve.status_code == 200 else abandon
    shown = (await client.get(f"/paths/{path['id']}")).json()
    assert shown["path"]["status"] == winner.json()["path"]["status"]
    assert len(shown["waypoints"]) == (2 if winner is resolve else 1)
