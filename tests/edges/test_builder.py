"""The edge builder on real records in PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.factories import breadcrumb

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.db.engine import tenant_session
from cairn.edges.builder import CAUSAL, SEMANTIC, TAG, TEMPORAL, EdgeOptions, build_edges


async def _post(client: httpx.AsyncClient, **overrides: object) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def _build(app: FastAPI, ids: Sequence[uuid.UUID]) -> None:
    resources = app.state.resources
    for record_id in ids:
        async with (
            tenant_session(resources.session_factory, resources.default_tenant) as session,
            session.begin(),
        ):
            row = await breadcrumbs.get(session, resources.default_tenant, record_id)
            assert row is not None
            await build_edges(session, row, EdgeOptions())


async def _edges(app: FastAPI, ids: Sequence[uuid.UUID]) -> set[tuple[uuid.UUID, uuid.UUID, int]]:
    query = text(
        "SELECT from_id, to_id, edge_type FROM breadcrumb_edges"
        " WHERE from_id = ANY(:ids) AND to_id = ANY(:ids)"
    )
    async with app.state.resources.system_engine.connect() as connection:
        rows = await connection.execute(query, {"ids": list(ids)})
        return {(row.from_id, row.to_id, row.edge_type) for row in rows}


async def test_session_request_response_and_reply_edges(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    rid = f"calc-{uuid.uuid4().hex[:6]}"
    ask = await _post(client, tags=[session], title="question", context={"text": "what is 2+2"})
    plan = await _post(
        client, tags=[session], title="plan",
        context={"message": "calling", "tool_requests": [{"tool": "calculator", "requestId": rid}]},
    )  # fmt: skip
    answer = await _post(
        client, tags=[session], title="result", context={"requestId": rid, "output": 4}
    )
    reply = await _post(client, title="follow-up", context={"reply_to": str(ask), "text": "thanks"})
    ids = [ask, plan, answer, reply]
    await _build(app, ids)
    edges = await _edges(app, ids)
    assert {(ask, plan, TEMPORAL), (plan, answer, TEMPORAL)} <= edges
    assert (plan, answer, CAUSAL) in edges
    assert (ask, reply, CAUSAL) in edges
    assert (ask, answer, TEMPORAL) not in edges  # only the previous record of the session


async def test_response_arriving_first_is_linked_when_the_request_comes(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    rid = f"r-{uuid.uuid4().hex[:6]}"
    answer = await _post(client, title="early result", context={"requestId": rid})
    plan = await _post(client, title="late plan", context={"tool_requests": [{"requestId": rid}]})
    await _build(app, [answer, plan])
    assert (plan, answer, CAUSAL) in await _edges(app, [answer, plan])


async def test_tag_and_semantic_edges_and_idempotency(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    tag = f"topic{uuid.uuid4().hex[:6]}"
    title = "Lisbon office invoices"
    first_text = {"text": "Invoices for the Lisbon office are due on Friday"}
    second_text = {"text": "The Lisbon office invoices are due this Friday"}
    first = await _post(client, tags=[tag], title=title, context=first_text)
    second = await _post(client, tags=[tag], title=title, context=second_text)
    await _build(app, [first, second])
    edges = await _edges(app, [first, second])
    assert (second, first, TAG) in edges
    assert (second, first, SEMANTIC) in edges or (first, second, SEMANTIC) in edges
    await _build(app, [first, second])
    assert await _edges(app, [first, second]) == edges  # rebuilding adds nothing
    query = text(
        "SELECT weight FROM breadcrumb_edges WHERE edge_type = 3 AND from_id = :a AND to_id = :b"
    )
    async with app.state.resources.system_engine.connect() as connection:
        weight = (await connection.execute(query, {"a": second, "b": first})).scalar_one()
    assert 0.55 <= weight <= 1.0


async def test_edges_never_cross_tenants(client: httpx.AsyncClient, app: FastAPI) -> None:
    from cairn.breadcrumbs.schemas import BreadcrumbCreate
    from cairn.breadcrumbs.service import BreadcrumbWriter
    from cairn.db.tenants import ensure_tenant
    from cairn.principal import Principal

    resources = app.state.resources
    other = uuid.uuid4()
    await ensure_tenant(resources.engine, other, f"tenant-{other}")
    text_ = {"text": "Quarterly numbers for the Oslo branch look strong"}
    mine = await _post(client, tags=["oslo"], title="Oslo numbers", context=text_)
    scoped = tenant_session(resources.session_factory, other)
    async with scoped as session, session.begin():
        writer = BreadcrumbWriter(
            session, resources.embedder, resources.settings.limits, Principal(other, "t")
        )
        body = BreadcrumbCreate.model_validate(
            breadcrumb(tags=["oslo"], title="Oslo numbers", context=text_)
        )
        theirs = (await writer.create(body, None)).id
    scoped = tenant_session(resources.session_factory, other)
    async with scoped as session, session.begin():
        row = await breadcrumbs.get(session, other, theirs)
        assert row is not None
        await build_edges(session, row, EdgeOptions())
    assert not await _edges(app, [mine, theirs])


async def _set_status(client: httpx.AsyncClient, record_id: uuid.UUID, status: str) -> None:
    url = f"/breadcrumbs/{record_id}/context/merge"
    response = await client.post(url, json={"context": {"status": status}})
    assert response.status_code == 200, response.text


def _handoff(task: str, status: str, **context: object) -> dict[str, object]:
    body = {"task": task, "summary": f"{task} summary", "status": status, **context}
    return {"schema_name": "task.handoff.v1", "title": task, "context": body}


async def test_listed_dependencies_link_only_once_finished(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    done = await _post(client, **_handoff("Login", "completed"))
    running = await _post(client, **_handoff("Logout", "in_progress"))
    plain = await _post(client, title="design note", context={"text": "tokens expire"})
    listed = [str(done), str(running), str(plain), str(uuid.uuid4()), "not-an-id", 7]
    task = await _post(
        client, schema_name="task.v1", title="Refresh tokens",
        context={"objective": "refresh", "dependencies": listed[:3], "depends_on": listed[3:]},
    )  # fmt: skip
    await _build(app, [done, running, plain, task])
    causal = {(a, b) for a, b, kind in await _edges(app, [done, running, plain, task]) if kind == 0}
    assert causal == {(done, task), (plain, task)}


async def test_a_dependency_finishing_later_links_and_unfinishing_takes_it_back(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    handoff = await _post(client, **_handoff("Schema", "in_progress"))
    task = await _post(
        client, schema_name="task.v1", title="Migrate",
        context={"objective": "migrate", "depends_on": [str(handoff)]},
    )  # fmt: skip
    other = await _post(
        client, schema_name="task.v1", title="Backfill", tags=["backfill"],
        context={"objective": "backfill", "dependencies": [str(handoff)]},
    )  # fmt: skip
    ids = [handoff, task, other]
    await _build(app, ids)
    assert not {edge for edge in await _edges(app, ids) if edge[2] == CAUSAL}
    await _set_status(client, handoff, "completed")
    await _build(app, [handoff])  # only the dependency is rebuilt: it finds its dependents
    causal = {edge for edge in await _edges(app, ids) if edge[2] == CAUSAL}
    assert causal == {(handoff, task, CAUSAL), (handoff, other, CAUSAL)}
    await _set_status(client, handoff, "blocked")
    await _build(app, [handoff])
    assert not {edge for edge in await _edges(app, ids) if edge[2] == CAUSAL}


async def test_a_dependent_rebuilt_drops_a_dependency_that_is_no_longer_finished(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    handoff = await _post(client, **_handoff("Cache", "completed"))
    task = await _post(
        client, schema_name="task.v1", title="Warm cache",
        context={"objective": "warm", "dependencies": [str(handoff)]},
    )  # fmt: skip
    reply = await _post(
        client, title="thanks", context={"reply_to": str(handoff), "dependencies": [str(handoff)]}
    )
    await _build(app, [task, reply])
    assert {(handoff, task, CAUSAL), (handoff, reply, CAUSAL)} <= await _edges(
        app, [handoff, task, reply]
    )
    # The status changes and only the dependents are rebuilt (the events may come in any order).
    query = text(
        'UPDATE breadcrumbs SET context = context || \'{"status": "failed"}\' WHERE id = :id'
    )
    async with app.state.resources.system_engine.begin() as connection:
        await connection.execute(query, {"id": handoff})
    await _build(app, [task, reply])
    edges = await _edges(app, [handoff, task, reply])
    assert (handoff, task, CAUSAL) not in edges
    assert (handoff, reply, CAUSAL) in edges  # its reply_to still links them
