"""Tenant B's tokens against tenant A's records, over HTTP: 404 for every record route, A's
records absent from B's lists and searches, and none of A's events on B's stream."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from tests.assemblies.helpers import entry
from tests.auth.conftest import Mint, bearer
from tests.factories import breadcrumb, long_note
from tests.stream.sse_client import sse

from cairn.db.engine import tenant_session
from cairn.events.dead_letters import DeadEventStore
from cairn.events.messages import Delivery

RECORD_ROUTES = [
    ("GET", "/breadcrumbs/{id}", None),
    ("GET", "/breadcrumbs/{id}/full", None),
    ("GET", "/breadcrumbs/{id}/history", None),
    ("GET", "/breadcrumbs/{id}/edges", None),
    ("GET", "/breadcrumbs/{id}/processing", None),
    ("PATCH", "/breadcrumbs/{id}", {"title": "taken over"}),
    ("DELETE", "/breadcrumbs/{id}", None),
    ("POST", "/breadcrumbs/{id}/tags/add", {"tags": ["b-was-here"]}),
    ("POST", "/breadcrumbs/{id}/tags/remove", {"tags": ["secret"]}),
    ("POST", "/breadcrumbs/{id}/context/merge", {"context": {"owned": "by b"}}),
    ("POST", "/breadcrumbs/{id}/approve", None),
    ("POST", "/breadcrumbs/{id}/reject", None),
]


@pytest.fixture
async def record_of_a(jwt_client: httpx.AsyncClient, mint: Mint, marker: str) -> dict[str, str]:
    tenant_a = uuid.uuid4()
    token = mint(owner_id=tenant_a, roles=["curator"])
    body = breadcrumb(title=f"A's plan {marker}", tags=[marker, "secret"])
    response = await jwt_client.post("/breadcrumbs", json=body, headers=bearer(token))
    assert response.status_code == 201, response.text
    return {"id": response.json()["id"], "token": token, "tenant": str(tenant_a)}


@pytest.mark.parametrize("part", ["edges", "processing"])
async def test_tenant_a_reads_its_own_records_edges_and_processing(
    jwt_client: httpx.AsyncClient, record_of_a: dict[str, str], part: str
) -> None:
    """The other side of the 404s below: the same routes answer the record's own tenant."""
    url = f"/breadcrumbs/{record_of_a['id']}/{part}"
    response = await jwt_client.get(url, headers=bearer(record_of_a["token"]))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(("method", "path", "body"), RECORD_ROUTES)
async def test_tenant_b_gets_404_on_each_record_route_of_tenant_a(
    jwt_client: httpx.AsyncClient,
    mint: Mint,
    record_of_a: dict[str, str],
    method: str,
    path: str,
    body: dict[str, object] | None,
) -> None:
    curator_b = mint(owner_id=uuid.uuid4(), roles=["curator"])
    url = path.format(id=record_of_a["id"])
    response = await jwt_client.request(method, url, json=body, headers=bearer(curator_b))
    assert response.status_code == 404, response.text
    # And A's record is untouched.
    mine = await jwt_client.get(
        f"/breadcrumbs/{record_of_a['id']}", headers=bearer(record_of_a["token"])
    )
    assert mine.status_code == 200 and mine.json()["version"] == 1


async def test_tenant_b_lists_and_searches_none_of_tenant_a(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str], marker: str
) -> None:
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["subscriber"]))
    listed = await jwt_client.get("/breadcrumbs", params={"tag": marker}, headers=b)
    assert listed.status_code == 200 and listed.json() == []
    found = await jwt_client.get(
        "/breadcrumbs/search", params={"q": f"A's plan {marker}"}, headers=b
    )
    assert found.status_code == 200
    assert record_of_a["id"] not in {hit["id"] for hit in found.json()}
    rendered = await jwt_client.post(
        "/breadcrumbs/render", json={"ids": [record_of_a["id"]]}, headers=b
    )
    assert rendered.status_code in (200, 404)
    assert record_of_a["id"] not in str(rendered.json().get("items", rendered.json()))


async def test_batches_write_into_the_callers_tenant_and_keys_are_per_tenant(
    jwt_client: httpx.AsyncClient, mint: Mint, marker: str
) -> None:
    """The same batch, idempotency keys and all, from A and from B: two sets of records,
    each visible only to its own tenant (a key of A's is no replay for B)."""
    records = [{**breadcrumb(tags=[marker]), "idempotency_key": f"{marker}-{n}"} for n in (1, 2)]
    ids = {}
    for name in ("a", "b"):
        token = bearer(mint(owner_id=uuid.uuid4(), roles=["emitter"]))
        answer = await jwt_client.post(
            "/breadcrumbs/batch", json={"records": records}, headers=token
        )
        assert answer.status_code == 200 and answer.json()["created"] == 2, answer.text
        ids[name] = {r["id"] for r in answer.json()["results"]}
        listed = await jwt_client.get("/breadcrumbs", params={"tag": marker}, headers=token)
        assert {item["id"] for item in listed.json()} == ids[name]
    assert not ids["a"] & ids["b"]


async def test_tenant_b_cannot_assemble_with_tenant_a_trigger(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str]
) -> None:
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    body = {"trigger_id": record_of_a["id"], "agent_id": "cairn-chat"}
    response = await jwt_client.post("/contexts/assemble", json=body, headers=b)
    assert response.status_code == 404


async def test_tenant_b_cannot_read_tenant_a_context_debug(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str], marker: str
) -> None:
    a = bearer(record_of_a["token"])
    agent_id = f"debug-{marker[5:]}"
    agent = {
        "schema_name": "agent.def.v1", "title": "A's debugged agent", "tags": [marker],
        "context": {"agent_id": agent_id, "context_trigger": {"any_tags": [marker]}},
    }  # fmt: skip
    assert (await jwt_client.post("/breadcrumbs", json=agent, headers=a)).status_code == 201
    body = {"trigger_id": record_of_a["id"], "agent_id": agent_id}
    assert (await jwt_client.post("/contexts/assemble", json=body, headers=a)).status_code == 200
    url = f"/contexts/{agent_id}/debug"
    mine = await jwt_client.get(url, headers=a)
    assert mine.status_code == 200 and agent_id in mine.text  # the worker may be newer
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    assert (await jwt_client.get(url, headers=b)).status_code == 404
    b_in_session = await jwt_client.get(url, params={"session": marker}, headers=b)
    assert b_in_session.status_code == 404


async def test_tenant_b_cannot_query_with_tenant_a_trigger_or_agent(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str], marker: str
) -> None:
    a = bearer(record_of_a["token"])
    agent = {
        "schema_name": "agent.def.v1", "title": "A's reader", "tags": [marker],
        "context": {"agent_id": f"reader-{marker[5:]}", "context_trigger": {"any_tags": [marker]}},
    }  # fmt: skip
    assert (await jwt_client.post("/breadcrumbs", json=agent, headers=a)).status_code == 201
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    by_trigger = {"trigger_id": record_of_a["id"], "agent": {}}
    response = await jwt_client.post("/contexts/query", json=by_trigger, headers=b)
    assert response.status_code == 404, response.text
    by_agent = {"query": f"A's plan {marker}", "agent_id": f"reader-{marker[5:]}"}
    response = await jwt_client.post("/contexts/query", json=by_agent, headers=b)
    assert response.status_code == 404, response.text
    # A itself gets both.
    for body in (by_trigger, by_agent):
        assert (await jwt_client.post("/contexts/query", json=body, headers=a)).status_code == 200


async def test_tenant_b_administers_only_its_own_tenant(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str]
) -> None:
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    tenant_a = record_of_a["tenant"]
    assert (await jwt_client.get(f"/tenants/{tenant_a}", headers=b)).status_code == 404
    renamed = await jwt_client.put(f"/tenants/{tenant_a}", json={"name": "mine now"}, headers=b)
    assert renamed.status_code == 403
    assert tenant_a not in {t["id"] for t in (await jwt_client.get("/tenants", headers=b)).json()}


async def test_tenant_b_sees_none_of_tenant_a_events(
    jwt_client: httpx.AsyncClient, jwt_live_url: str, mint: Mint, marker: str
) -> None:
    a = bearer(mint(owner_id=uuid.uuid4(), roles=["emitter"]))
    b_token = mint(owner_id=uuid.uuid4(), roles=["emitter"])
    async with sse(jwt_live_url, {"any_tags": marker, "access_token": b_token}) as stream:
        for _ in range(3):
            created = await jwt_client.post(
                "/breadcrumbs", json=breadcrumb(tags=[marker]), headers=a
            )
            assert created.status_code == 201
        own = await jwt_client.post(
            "/breadcrumbs", json=breadcrumb(tags=[marker]), headers=bearer(b_token)
        )
        _, event = await stream.next_event()
        assert event["breadcrumb_id"] == own.json()["id"]  # A's three came first, unseen


def _path(marker: str) -> dict[str, object]:
    context = {
        "session": f"session:{marker}",
        "status": "active",
        "sequence": 0,
        "started_at": "2026-11-26T10:00:00+00:00",
        "trigger_record_id": str(uuid.uuid4()),
    }
    return breadcrumb(schema_name="debug.path.v1", tags=[marker], context=context)


async def test_tenant_b_gets_none_of_tenant_a_path_frames(
    jwt_client: httpx.AsyncClient, jwt_live_url: str, mint: Mint, marker: str
) -> None:
    """Both tenants' paths in the same session name: B's stream asks for every path frame
    of that session, and gets its own only."""
    a = bearer(mint(owner_id=uuid.uuid4(), roles=["emitter"]))
    b_token = mint(owner_id=uuid.uuid4(), roles=["emitter"])
    params = {"session": marker, "paths": "true", "access_token": b_token}
    async with sse(jwt_live_url, params) as stream:
        for _ in range(3):
            created = await jwt_client.post("/breadcrumbs", json=_path(marker), headers=a)
            assert created.status_code == 201, created.text
        own = await jwt_client.post("/breadcrumbs", json=_path(marker), headers=bearer(b_token))
        assert own.status_code == 201, own.text
        frame = await stream.next_frame()
        assert frame["data"]["type"] == "path_started"
        assert frame["data"]["path_id"] == own.json()["id"]  # A's three came first, unseen


async def test_the_stream_takes_the_token_from_the_header_too(
    jwt_live_url: str, mint: Mint
) -> None:
    async with sse(jwt_live_url, headers=bearer(mint(roles=["subscriber"]))) as stream:
        assert stream.response.status_code == 200


async def test_the_stream_refuses_a_missing_or_bad_token(jwt_live_url: str) -> None:
    async with httpx.AsyncClient(base_url=jwt_live_url) as client:
        for params in ({}, {"access_token": "forged"}):
            response = await client.get("/events/stream", params=params)
            assert response.status_code == 401


async def test_tenant_b_sees_and_removes_none_of_tenant_a_webhooks_and_agents(
    jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    tenant_a, agent = uuid.uuid4(), f"agent-{uuid.uuid4().hex[:8]}"
    a = bearer(mint(owner_id=tenant_a, roles=["curator"]))
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    hook = await jwt_client.post(
        f"/agents/{agent}/webhooks", json={"url": "http://127.0.0.1:9/a"}, headers=a
    )
    assert hook.status_code == 201, hook.text
    registered = await jwt_client.post(f"/agents/{agent}", json={"roles": ["emitter"]}, headers=a)
    assert registered.status_code == 200
    assert (await jwt_client.get(f"/agents/{agent}/webhooks", headers=b)).json() == []
    removed = await jwt_client.delete(f"/agents/{agent}/webhooks/{hook.json()['id']}", headers=b)
    assert removed.status_code == 404
    assert (await jwt_client.get(f"/agents/{agent}", headers=b)).status_code == 404
    assert agent not in {
        row["agent_id"] for row in (await jwt_client.get("/agents", headers=b)).json()
    }
    assert (await jwt_client.delete(f"/agents/{agent}", headers=b)).status_code == 404
    # A's are all still there.
    assert len((await jwt_client.get(f"/agents/{agent}/webhooks", headers=a)).json()) == 1
    assert (await jwt_client.get(f"/agents/{agent}", headers=a)).status_code == 200


async def test_tenant_b_sees_and_removes_none_of_tenant_a_dead_events(
    jwt_app: FastAPI, jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    tenant_a = uuid.uuid4()
    a = bearer(mint(owner_id=tenant_a, roles=["curator"]))
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    assert (await jwt_client.get("/worker/dead", headers=a)).json() == []  # A's tenant exists
    event = {"type": "breadcrumb.created", "owner_id": str(tenant_a), "event_id": "e-1"}
    delivery = Delivery("bc.x.created", json.dumps(event).encode(), 10**9 + 1, 20)
    sink = DeadEventStore(jwt_app.state.resources.session_factory)
    await sink.record(f"isolation-{tenant_a}", delivery, "gave up")
    [entry] = (await jwt_client.get("/worker/dead", headers=a)).json()
    assert entry["event_id"] == "e-1" and entry["deliveries"] == 20
    assert (await jwt_client.get("/worker/dead", headers=b)).json() == []
    assert (await jwt_client.delete(f"/worker/dead/{entry['id']}", headers=b)).status_code == 404
    assert (await jwt_client.delete(f"/worker/dead/{entry['id']}", headers=a)).status_code == 200
    assert (await jwt_client.get("/worker/dead", headers=a)).json() == []


async def test_tenant_b_coverage_counts_none_of_tenant_a_records(
    jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str]
) -> None:
    a = {"Authorization": f"Bearer {record_of_a['token']}"}
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    mine = (await jwt_client.get("/coverage", headers=a)).json()
    assert mine["records"] == 1 and mine["stages"]["embedded"]["done"] == 1
    theirs = (await jwt_client.get("/coverage", headers=b)).json()  # never A's kept figures
    assert theirs["records"] == 0 and theirs["by_schema"] == {} and theirs["islands"]["count"] == 0
    assert theirs["computed_at"] != mine["computed_at"]
    assert (await jwt_client.get("/coverage", headers=b)).json() == theirs  # B's, kept
    assert (await jwt_client.get("/coverage", headers=a)).json()["records"] == 1


async def test_tenant_b_graphs_none_of_tenant_a_records(
    jwt_app: FastAPI, jwt_client: httpx.AsyncClient, mint: Mint, record_of_a: dict[str, str]
) -> None:
    """A's record id is a 404 for B; and even an edge row of B's that points at A's record
    (planted past the API) brings none of A's records into B's graph."""
    tenant_b = uuid.uuid4()
    b = bearer(mint(owner_id=tenant_b, roles=["curator"]))
    for params in ({"around": record_of_a["id"]}, {"context": record_of_a["id"]}):
        response = await jwt_client.get("/graph", params=params, headers=b)
        assert response.status_code == 404 and "nodes" not in response.json()
    created = await jwt_client.post("/breadcrumbs", json=breadcrumb(title="B's own"), headers=b)
    own = created.json()["id"]
    planted = text(
        "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
        " VALUES (:owner, :mine, :theirs, 0, 1)"
    )
    async with jwt_app.state.resources.system_engine.begin() as connection:
        params = {"owner": tenant_b, "mine": own, "theirs": record_of_a["id"]}
        await connection.execute(planted, params)
    graph = await jwt_client.get("/graph", params={"around": own, "depth": 3}, headers=b)
    assert graph.status_code == 200, graph.text
    assert [node["id"] for node in graph.json()["nodes"]] == [own]
    assert graph.json()["edges"] == [] and record_of_a["id"] not in graph.text
    mine = await jwt_client.get(
        "/graph", params={"around": record_of_a["id"]}, headers=bearer(record_of_a["token"])
    )
    assert [node["id"] for node in mine.json()["nodes"]] == [record_of_a["id"]]


async def test_tenant_b_sees_none_of_tenant_a_reindex_jobs(
    jwt_client: httpx.AsyncClient, mint: Mint, marker: str
) -> None:
    a = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    schema = f"iso{marker.split(':')[1]}.v1"
    definition = {
        "schema_name": "schema.def.v1", "title": "defines", "tags": [f"defines:{schema}"],
        "context": {}, "llm_hints": {"transform": {"x": {"type": "format", "format": "x"}}},
    }  # fmt: skip
    assert (await jwt_client.post("/breadcrumbs", json=definition, headers=a)).status_code == 201
    [job] = (await jwt_client.get("/reindex", headers=a)).json()
    assert (job["schema_name"], job["origin"]) == (schema, "hints")
    assert (await jwt_client.get("/reindex", headers=b)).json() == []


async def test_tenant_b_sees_none_of_tenant_a_assemblies(
    jwt_app: FastAPI, jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    tenant_a = uuid.uuid4()
    a = bearer(mint(owner_id=tenant_a, roles=["curator"]))
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    assert (await jwt_client.get("/assemblies", headers=a)).json()["items"] == []  # A exists
    logged = entry(tenant_a, "a-agent", query_text="A's question")
    queue = jwt_app.state.resources.contexts.assembly_log
    queue.put(logged)
    await queue.flush()
    [mine] = (await jwt_client.get("/assemblies", headers=a)).json()["items"]
    assert mine["query_text"] == "A's question"
    assert (await jwt_client.get("/assemblies", headers=b)).json()["items"] == []
    for params in ({}, {"agent_id": "a-agent"}):
        listed = await jwt_client.get("/assemblies", params=params, headers=b)
        assert listed.json()["items"] == []
    assert (await jwt_client.get("/assemblies/stats", headers=b)).json()["agents"] == []
    stats = (await jwt_client.get("/assemblies/stats", headers=a)).json()["agents"]
    assert [row["agent_id"] for row in stats] == ["a-agent"]


async def test_tenant_b_reads_searches_and_writes_none_of_tenant_a_chunks(
    jwt_client: httpx.AsyncClient, mint: Mint, app: FastAPI, marker: str
) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    token_a, token_b = (bearer(mint(owner_id=o, roles=["curator"])) for o in (a, b))
    body = breadcrumb(title=f"Garden diary {marker}", context={"text": long_note()})
    created = await jwt_client.post("/breadcrumbs", json=body, headers=token_a)
    assert created.status_code == 201, created.text
    record_a = created.json()["id"]
    mine = breadcrumb(title="Office note", context={"text": "The coffee machine is fine."})
    assert (await jwt_client.post("/breadcrumbs", json=mine, headers=token_b)).is_success
    question = "When will the technician repair the broken espresso machine?"
    for mode in ("vector", "hybrid"):
        params = {"q": question, "mode": mode}
        found = await jwt_client.get("/breadcrumbs/search", params=params, headers=token_b)
        assert found.status_code == 200 and found.json()
        assert record_a not in {hit["id"] for hit in found.json()}
    sessions = app.state.resources.session_factory
    unscoped = text("SELECT breadcrumb_id FROM breadcrumb_chunks")  # no owner predicate
    async with tenant_session(sessions, a) as session:
        assert len((await session.execute(unscoped)).all()) >= 3
    async with tenant_session(sessions, b) as session:
        assert (await session.execute(unscoped)).all() == []
    forged = text(
        "INSERT INTO breadcrumb_chunks (owner_id, breadcrumb_id, ordinal, char_start, char_end,"
        " text, embedding) SELECT :a, :id, 99, 0, 1, 'x', embedding FROM breadcrumbs LIMIT 1"
    )
    with pytest.raises(DBAPIError):
        async with tenant_session(sessions, b) as session, session.begin():
            await session.execute(forged, {"a": a, "id": uuid.UUID(record_a)})


async def test_tenant_b_lists_sees_resolves_and_abandons_none_of_tenant_a_paths(
    jwt_client: httpx.AsyncClient, mint: Mint, marker: str
) -> None:
    a = bearer(mint(owner_id=uuid.uuid4(), roles=["emitter"]))
    b = bearer(mint(owner_id=uuid.uuid4(), roles=["curator"]))
    session = f"session:{marker.split(':')[1]}"
    body = {"session": session, "summary": "A's export hangs"}
    started = await jwt_client.post("/paths", json=body, headers=a)
    assert started.status_code == 201, started.text
    path = started.json()["path"]
    assert (await jwt_client.get("/paths", headers=b)).json() == []
    assert (await jwt_client.get("/paths", params={"session": session}, headers=b)).json() == []
    active = await jwt_client.get("/paths/active", params={"session": session}, headers=b)
    assert active.status_code == 200 and active.json() is None
    assert (await jwt_client.get(f"/paths/{path['id']}", headers=b)).status_code == 404
    for action in ("resolve", "abandon"):
        taken = await jwt_client.post(f"/paths/{path['id']}/{action}", json={}, headers=b)
        assert taken.status_code == 404, taken.text
    mine = (await jwt_client.get(f"/paths/{path['id']}", headers=a)).json()
    assert mine["path"] == path and len(mine["waypoints"]) == 1
    # B's own path for a session of the same name is B's alone: no conflict with A's.
    assert (await jwt_client.post("/paths", json=body, headers=b)).status_code == 201
    assert [p["id"] for p in (await jwt_client.get("/paths", headers=a)).json()] == [path["id"]]


async def test_another_agent_of_the_tenant_resolves_a_path_it_did_not_start(
    jwt_client: httpx.AsyncClient, mint: Mint, marker: str
) -> None:
    """Paths are Cairn's records: the emitter role suffices, whoever started the path."""
    owner = uuid.uuid4()
    starter = bearer(mint(owner_id=owner, sub="starter", roles=["emitter"]))
    other = bearer(mint(owner_id=owner, sub="other", roles=["emitter"]))
    body = {"session": f"session:{marker.split(':')[1]}", "summary": "flaky test"}
    path = (await jwt_client.post("/paths", json=body, headers=starter)).json()["path"]
    resolved = await jwt_client.post(f"/paths/{path['id']}/resolve", json={}, headers=other)
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["path"]["status"] == "resolved"
