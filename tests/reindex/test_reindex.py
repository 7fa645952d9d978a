"""Reindex against the real database: a hint change reindexes its schema in the background,
the filters select, a reindex reproduces the write path, and a lease keeps a job to one
runner at a time."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from cairn_client import AsyncClient
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.factories import breadcrumb, schema_definition
from tests.waiting import eventually

from cairn.config import ReindexSettings
from cairn.reindex import jobs
from cairn.reindex.jobs import CLI, DONE, Selection
from cairn.reindex.runner import LeaseLost, Reindexer

HINTS = {"transform": {"line": {"type": "format", "format": "zebracorn {who} shipped {text}"}}}


@pytest.fixture
def schema(marker: str) -> str:
    return f"r{marker.split(':')[1]}.v1"


async def _create(client: httpx.AsyncClient, body: dict[str, Any]) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


def _note(schema: str, n: int) -> dict[str, Any]:
    context = {"who": f"ana{n}", "text": f"release {n} of the billing service"}
    return breadcrumb(schema_name=schema, title=f"Release {n}", context=context)


async def _stored(db: AsyncEngine, ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    query = text(
        "SELECT b.id, b.version, b.updated_at, b.llm_text, b.embedding::text AS embedding,"
        " b.entity_keywords,"
        " (SELECT count(*) FROM breadcrumb_history h WHERE h.breadcrumb_id = b.id) AS history,"
        " (SELECT count(*) FROM outbox o WHERE o.payload->>'breadcrumb_id' = b.id::text)"
        " AS events"
        " FROM breadcrumbs b WHERE b.id = ANY(:ids)"
    )
    async with db.connect() as connection:
        rows = (await connection.execute(query, {"ids": ids})).mappings().all()
    return {row["id"]: dict(row) for row in rows}


async def _stages(db: AsyncEngine, ids: list[uuid.UUID]) -> dict[str, set[str]]:
    query = text("SELECT stage, state FROM record_processing WHERE breadcrumb_id = ANY(:ids)")
    async with db.connect() as connection:
        rows = (await connection.execute(query, {"ids": ids})).all()
    found: dict[str, set[str]] = {}
    for stage, state in rows:
        found.setdefault(stage, set()).add(state)
    return found


async def _jobs_of(db: AsyncEngine, owner: uuid.UUID) -> list[dict[str, Any]]:
    query = text("SELECT * FROM reindex_jobs WHERE owner_id = :owner ORDER BY created_at")
    async with db.connect() as connection:
        return [dict(r) for r in (await connection.execute(query, {"owner": owner})).mappings()]


def _reindexer(app: FastAPI, **settings: Any) -> Reindexer:
    resources = app.state.resources
    return Reindexer(resources.system_sessions, resources.embedder, ReindexSettings(**settings))


async def _cli_job(app: FastAPI, owner: uuid.UUID, selection: Selection) -> uuid.UUID:
    async with app.state.resources.system_sessions() as session, session.begin():
        (job_id,) = await jobs.create_cli_jobs(session, selection, [owner])
    return job_id


async def test_a_hint_change_reindexes_the_schemas_records_without_a_new_version(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    ids = [await _create(client, _note(schema, n)) for n in range(3)]
    other = await _create(client, _note(f"other.{schema}", 9))
    before = await _stored(db, [*ids, other])
    assert all("zebracorn" not in row["llm_text"] for row in before.values())

    await _create(client, schema_definition(schema, HINTS))

    (job,) = await _jobs_of(db, tenant)
    assert (job["origin"], job["schema_name"]) == ("hints", schema)

    async def finished() -> bool:
        return (await _jobs_of(db, tenant))[0]["state"] == DONE

    await eventually(finished, timeout=30)
    after = await _stored(db, [*ids, other])
    for record in ids:
        old, new = before[record], after[record]
        assert "zebracorn" in new["llm_text"] and "zebracorn" in new["entity_keywords"]
        assert new["embedding"] != old["embedding"]
        unchanged = ("version", "updated_at", "history", "events")
        assert {k: new[k] for k in unchanged} == {k: old[k] for k in unchanged}
    assert after[other] == before[other]  # another schema: not selected
    assert await _stages(db, ids) == {"embedded": {"done"}, "keyed": {"done"},
                                      "edged": {"done"}, "labelled": {"not_needed"},
                                      "chunked": {"not_needed"}}  # fmt: skip
    (done,) = await _jobs_of(db, tenant)
    assert (done["total"], done["done"], done["changed"], done["embedded"]) == (3, 3, 3, 3)
    assert done["failed"] == 0 and done["lease_owner"] is None


async def test_a_write_that_leaves_the_hints_alone_enqueues_nothing(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, HINTS))

    async def settled() -> bool:
        return [job["state"] for job in await _jobs_of(db, tenant)] == [DONE]

    await eventually(settled, timeout=30)
    patched = await client.patch(f"/breadcrumbs/{definition}", json={"description": "same hints"})
    assert patched.status_code == 200, patched.text
    assert len(await _jobs_of(db, tenant)) == 1
    changed = {"transform": {"line": {"type": "format", "format": "{who}"}}}
    patched = await client.patch(f"/breadcrumbs/{definition}", json={"llm_hints": changed})
    assert patched.status_code == 200, patched.text
    assert [job["schema_name"] for job in await _jobs_of(db, tenant)] == [schema, schema]


async def _stale(db: AsyncEngine, ids: list[uuid.UUID]) -> None:
    async with db.begin() as connection:
        await connection.execute(
            text("UPDATE breadcrumbs SET llm_text = 'stale' WHERE id = ANY(:ids)"), {"ids": ids}
        )


async def test_schema_and_since_select_the_records(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    mine = [await _create(client, _note(schema, n)) for n in range(4)]
    others = [await _create(client, _note(f"other.{schema}", n)) for n in range(2)]
    old = mine[:2]
    async with db.begin() as connection:
        query = "UPDATE breadcrumbs SET updated_at = now() - interval '10 days'"
        await connection.execute(text(f"{query} WHERE id = ANY(:ids)"), {"ids": old})
    await _stale(db, [*mine, *others])

    since = datetime.now(UTC) - timedelta(days=1)
    job_id = await _cli_job(app, tenant, Selection(schema, since))
    runner = _reindexer(app, batch=1)
    job = await runner.claim(CLI, among=[job_id])
    assert job is not None and job["total"] == 2
    finished = await runner.run(job)

    stored = await _stored(db, [*mine, *others])
    reindexed = {record for record, row in stored.items() if row["llm_text"] != "stale"}
    assert reindexed == set(mine[2:])
    assert (finished["done"], finished["changed"]) == (2, 2)


async def test_a_reindex_reproduces_what_the_write_path_stored(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    await _create(client, schema_definition(schema, HINTS))
    ids = [await _create(client, _note(schema, n)) for n in range(3)]

    async def hints_job_done() -> bool:  # a second job on the schema would wait for it
        return [job["state"] for job in await _jobs_of(db, tenant)] == [DONE]

    await eventually(hints_job_done, timeout=30)
    before = await _stored(db, ids)
    job_id = await _cli_job(app, tenant, Selection(schema))
    runner = _reindexer(app)
    job = await runner.claim(CLI, among=[job_id])
    assert job is not None
    finished = await runner.run(job)
    assert (finished["done"], finished["changed"], finished["embedded"]) == (3, 0, 3)
    after = await _stored(db, ids)
    for record in ids:
        assert after[record]["llm_text"] == before[record]["llm_text"]
        assert after[record]["entity_keywords"] == before[record]["entity_keywords"]


async def test_a_lease_keeps_a_job_to_one_runner(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    ids = [await _create(client, _note(schema, n)) for n in range(4)]
    job_id = await _cli_job(app, tenant, Selection(schema))
    first, second = _reindexer(app, batch=1), _reindexer(app, batch=1)
    job = await first.claim(CLI, among=[job_id])
    assert job is not None
    assert await second.claim(CLI, among=[job_id]) is None  # held: not run twice
    job = await first.run_batch(job)
    assert job is not None and job["done"] == 1

    async with db.begin() as connection:  # the first runner went silent past its lease
        query = "UPDATE reindex_jobs SET lease_expires_at = now() - interval '1 s' WHERE id = :id"
        await connection.execute(text(query), {"id": job_id})
    taken = await second.claim(CLI, among=[job_id])
    assert taken is not None and taken["cursor"] == job["cursor"]
    await _stale(db, ids)
    with pytest.raises(LeaseLost):
        await first.run_batch(job)  # its commit is refused: nothing written
    assert all(row["llm_text"] == "stale" for row in (await _stored(db, ids)).values())
    finished = await second.run(taken)
    assert (finished["done"], finished["state"]) == (4, DONE)
    reindexed = [r for r, row in (await _stored(db, ids)).items() if row["llm_text"] != "stale"]
    assert len(reindexed) == 3  # the one done before the takeover stays as it was staled


async def test_a_second_job_on_the_same_records_waits_for_the_first(
    app: FastAPI, client: httpx.AsyncClient, tenant: uuid.UUID, schema: str
) -> None:
    await _create(client, _note(schema, 0))
    first_job = await _cli_job(app, tenant, Selection(schema))
    second_job = await _cli_job(app, tenant, Selection(schema))
    first, second = _reindexer(app), _reindexer(app)
    job = await first.claim(CLI, among=[first_job, second_job])
    assert job is not None and job["id"] == first_job
    assert await second.claim(CLI, among=[second_job]) is None
    await first.run(job)
    taken = await second.claim(CLI, among=[second_job])
    assert taken is not None and taken["id"] == second_job
    await second.run(taken)


async def test_get_reindex_lists_the_jobs_with_their_progress(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    await _create(client, _note(schema, 0))
    await _create(client, schema_definition(schema, HINTS))

    async def listed_done() -> bool:
        response = await client.get("/reindex")
        assert response.status_code == 200, response.text
        return [(j["schema_name"], j["state"], j["done"]) for j in response.json()] == [
            (schema, DONE, 1)
        ]

    await eventually(listed_done, timeout=30)
    (job,) = (await client.get("/reindex", params={"limit": 1})).json()
    assert (job["total"], job["leased"], job["failures"]) == (1, False, [])
    assert (await client.get("/reindex", params={"limit": 0})).status_code == 422


async def test_a_second_hint_change_before_the_job_starts_adds_no_job(
    app: FastAPI, db: AsyncEngine, tenant: uuid.UUID, schema: str
) -> None:
    async with app.state.resources.system_sessions() as session, session.begin():
        await jobs.enqueue_hints_job(session, tenant, schema)
        await jobs.enqueue_hints_job(session, tenant, schema)
        await jobs.enqueue_hints_job(session, tenant, f"other.{schema}")
    assert sorted(job["schema_name"] for job in await _jobs_of(db, tenant)) == sorted(
        [schema, f"other.{schema}"]
    )


async def test_the_client_lists_a_hint_change_job(live_url: str, schema: str) -> None:
    async with AsyncClient(live_url) as cairn:
        await cairn.create_breadcrumb(**_note(schema, 0))
        await cairn.create_breadcrumb(**schema_definition(schema, HINTS))

        async def job_done() -> bool:
            listed = await cairn.list_reindex_jobs(limit=50)
            return any(j.schema_name == schema and j.state == DONE for j in listed)

        await eventually(job_done, timeout=30)
        (job,) = [j for j in await cairn.list_reindex_jobs() if j.schema_name == schema]
        assert (job.origin, job.total, job.done, job.failed) == ("hints", 1, 1, 0)
