"""Coverage is exact: embedding failures injected into a known subset of a fresh tenant's
records show in every figure of ``GET /coverage``; the retry job fixes what it can and the
figures move; the worker's edges count as ``edged``; islands are the records left alone."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from tests.factories import breadcrumb
from tests.waiting import eventually

from cairn.api import deps
from cairn.api.app import create_app
from cairn.config import Settings
from cairn.db.tenants import ensure_tenant
from cairn.embedding import HashEmbedder
from cairn.principal import Principal
from cairn.processing.retry import RetryJob

POISON = "RuntimeError: model refused: poison"
BROKEN = "ValueError: broken input"


class RefusingEmbedder(HashEmbedder):
    """The twin of the model that fails for certain texts: ``POISON`` until healed,
    ``BROKEN`` always."""

    def __init__(self) -> None:
        super().__init__()
        self.healed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        for item in texts:
            if "BROKEN" in item:
                raise ValueError("broken input")
            if "POISON" in item and not self.healed:
                raise RuntimeError("model refused: poison")
        return await super().embed(texts)


@pytest.fixture
async def refusing(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """An app with the refusing twin, acting as a fresh tenant of its own."""
    embedder = RefusingEmbedder()
    app = create_app(settings, embedder=embedder, migrate=False)
    async with app.router.lifespan_context(app):
        owner = uuid.uuid4()
        await ensure_tenant(app.state.resources.engine, owner, f"test-{owner}")
        app.dependency_overrides[deps.get_principal] = lambda: Principal(owner, "coverage")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client, app


async def _post(client: httpx.AsyncClient, title: str, **fields: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(title=title, **fields))
    assert response.status_code == 201, response.text  # a failed embedding never blocks
    return str(response.json()["id"])


async def _world(client: httpx.AsyncClient) -> dict[str, list[str]]:
    plain = {"text": "an ordinary note"}
    ids: dict[str, list[str]] = {"ok": [], "poison": [], "broken": []}
    for session in ("session:alpha-1", "session:alpha-1", "session:alpha-2", "session:alpha-2"):
        ids["ok"].append(await _post(client, "Alpha note", tags=[session], context=plain))
    for _ in range(2):
        ids["ok"].append(await _post(client, "Beta note", tags=["session:beta"], context=plain))
    for n in range(3):
        ids["poison"].append(await _post(client, f"POISON {n}", tags=[], context=plain))
    for n in range(2):
        ids["broken"].append(
            await _post(client, f"BROKEN {n}", tags=[], context=plain, schema_name="task.v1")
        )
    ids["context"] = [
        await _post(client, "An assembled context", tags=[], schema_name="agent.context.v1")
    ]
    return ids


def _stage(done: int = 0, pending: int = 0, failed: int = 0, not_needed: int = 0,
           untracked: int = 0, percent: float = 100.0) -> dict[str, Any]:  # fmt: skip
    return {
        "done": done, "pending": pending, "failed": failed, "not_needed": not_needed,
        "untracked": untracked, "percent": percent,
    }  # fmt: skip


async def _coverage(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/coverage")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _edged(client: httpx.AsyncClient) -> bool:
    return (await _coverage(client))["stages"]["edged"]["pending"] == 0


@pytest.mark.usefixtures("worker")
async def test_every_figure_of_coverage_is_exact_and_moves_with_retries(
    refusing: tuple[httpx.AsyncClient, Any], db: Any
) -> None:
    client, app = refusing
    ids = await _world(client)
    await eventually(lambda: _edged(client), timeout=30)  # the worker built every edge
    body = await _coverage(client)
    assert body["records"] == 12
    assert body["stages"] == {
        "embedded": _stage(done=6, failed=5, not_needed=1, percent=54.5),
        "keyed": _stage(done=12),
        "chunked": _stage(not_needed=12),  # short texts (long ones: tests/breadcrumbs)
        "edged": _stage(done=11, not_needed=1),
        "labelled": _stage(not_needed=12),  # the tenant defines no domains
    }
    assert body["errors"] == [
        {"stage": "embedded", "error": POISON, "records": 3},
        {"stage": "embedded", "error": BROKEN, "records": 2},
    ]
    assert {k: v["records"] for k, v in body["by_schema"].items()} == {
        "note.v1": 9, "task.v1": 2, "agent.context.v1": 1,
    }  # fmt: skip
    assert body["by_schema"]["task.v1"]["stages"]["embedded"] == _stage(failed=2, percent=0.0)
    assert body["by_schema"]["note.v1"]["stages"]["embedded"] == _stage(
        done=6, failed=3, percent=66.7
    )
    assert {k: v["records"] for k, v in body["by_session"].items()} == {
        "session:alpha": 4, "session:beta": 2,
    }  # fmt: skip
    assert body["by_session"]["session:alpha"]["stages"]["embedded"] == _stage(done=4)
    islands = ids["poison"] + ids["broken"]  # no vector, no tags: nothing links them
    assert body["islands"] == {"count": 5, "ids": islands}

    app.state.resources.embedder.healed = True
    resources = app.state.resources
    job = RetryJob(resources.system_sessions, resources.session_factory, resources.embedder)
    while await job.run_once():
        pass
    after = await _coverage(client)
    assert after["records"] == 12
    assert after["stages"]["embedded"] == _stage(done=9, failed=2, not_needed=1, percent=81.8)
    assert after["stages"]["edged"] == _stage(done=11, not_needed=1)
    assert after["stages"]["labelled"] == _stage(not_needed=12)
    assert after["errors"] == [{"stage": "embedded", "error": BROKEN, "records": 2}]
    assert set(ids["broken"]) <= set(after["islands"]["ids"])
    assert after["islands"]["count"] == len(after["islands"]["ids"])
    async with db.connect() as connection:
        rows = (
            await connection.execute(
                text(
                    "SELECT attempts, next_attempt_at > now() AS later, last_error"
                    " FROM record_processing WHERE stage = 'embedded'"
                    " AND breadcrumb_id = ANY(CAST(:ids AS uuid[]))"
                ),
                {"ids": ids["broken"]},
            )
        ).all()
    assert [tuple(row) for row in rows] == [(2, True, BROKEN)] * 2  # backed off, not given up


DOMAINS = {"domains": [{"name": "technical", "triggers": ["postgresql", "database"]}]}


async def test_labels_count_where_the_tenant_defines_domains_and_a_delete_leaves_nothing(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    definition = breadcrumb(schema_name="context.domains.v1", title="Domains", context=DOMAINS)
    assert (await client.post("/breadcrumbs", json=definition)).status_code == 201
    note = await _post(client, "PostgreSQL vacuum", context={"text": "the database"})
    body = await _coverage(client)
    assert body["records"] == 2
    assert body["stages"]["labelled"] == _stage(done=1, not_needed=1)
    assert body["stages"]["embedded"] == _stage(done=2)
    assert (await client.delete(f"/breadcrumbs/{note}")).status_code == 200
    after = await _coverage(client)
    assert after["records"] == 1 and after["stages"]["labelled"] == _stage(not_needed=1)


async def test_mark_failed_then_done_is_what_coverage_shows(
    app: Any, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    from cairn import processing
    from cairn.db.engine import tenant_session

    record = uuid.UUID(await _post(client, "Chunky", tags=[]))
    sessions = app.state.resources.session_factory
    async with tenant_session(sessions, tenant) as session, session.begin():
        await processing.mark_failed(session, tenant, record, processing.CHUNKED, "disk full")
    body = await _coverage(client)
    assert body["stages"]["chunked"] == _stage(failed=1, percent=0.0)
    assert body["errors"] == [{"stage": "chunked", "error": "disk full", "records": 1}]
    async with tenant_session(sessions, tenant) as session, session.begin():
        await processing.mark_done(session, tenant, [record], processing.CHUNKED)
    after = await _coverage(client)
    assert after["stages"]["chunked"] == _stage(done=1) and after["errors"] == []
    with pytest.raises(ValueError, match="unknown processing stage"):
        async with tenant_session(sessions, tenant) as session, session.begin():
            await processing.mark_done(session, tenant, [record], "polished")


async def test_the_retry_job_gives_up_after_its_attempts_and_counts_them(
    refusing: tuple[httpx.AsyncClient, Any], db: Any
) -> None:
    from cairn.config import ProcessingSettings
    from cairn.processing.retry import RETRIES

    client, app = refusing
    record = await _post(client, "BROKEN beyond repair", tags=[])
    resources = app.state.resources
    settings = ProcessingSettings(retry_backoff_s=0, retry_max_attempts=3)
    job = RetryJob(
        resources.system_sessions, resources.session_factory, resources.embedder, settings
    )
    failures = RETRIES.labels("embedded", "failed")._value.get()
    while await job.run_once():  # backoff 0: due again at once, until it gives up
        pass
    assert RETRIES.labels("embedded", "failed")._value.get() >= failures + 2
    query = (
        "SELECT state, attempts, next_attempt_at, last_error FROM record_processing"
        " WHERE breadcrumb_id = :id AND stage = 'embedded'"
    )
    async with db.connect() as connection:
        row = (await connection.execute(text(query), {"id": record})).one()
    assert tuple(row) == ("failed", 3, None, BROKEN)  # the write's try and two retries
    body = await _coverage(client)
    assert body["stages"]["embedded"]["failed"] == 1


@pytest.mark.usefixtures("worker")
async def test_edges_the_worker_never_built_are_built_by_the_retry_job(
    refusing: tuple[httpx.AsyncClient, Any], db: Any
) -> None:
    client, app = refusing
    ids = [await _post(client, f"Step {n}", tags=["session:gamma"]) for n in range(2)]
    await eventually(lambda: _edged(client), timeout=30)
    async with db.begin() as connection:  # as if the worker had never handled the events
        lost = {"ids": ids}
        await connection.execute(
            text("DELETE FROM breadcrumb_edges WHERE from_id = ANY(CAST(:ids AS uuid[]))"), lost
        )
        await connection.execute(
            text(
                "UPDATE record_processing SET state = 'pending', next_attempt_at = now()"
                " WHERE stage = 'edged' AND breadcrumb_id = ANY(CAST(:ids AS uuid[]))"
            ),
            lost,
        )
    stranded = await _coverage(client)
    assert stranded["stages"]["edged"]["pending"] == 2 and stranded["islands"]["count"] == 2
    resources = app.state.resources
    job = RetryJob(resources.system_sessions, resources.session_factory, resources.embedder)
    while await job.run_once():
        pass
    rebuilt = await _coverage(client)
    assert rebuilt["stages"]["edged"] == _stage(done=2)
    assert rebuilt["islands"] == {"count": 0, "ids": []}
