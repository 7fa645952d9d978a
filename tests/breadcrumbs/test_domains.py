"""Domain labels against the real database: a ``context.domains.v1`` is checked on write,
records are labelled when written, and relabelled in the background when the definition
changes or goes away. Each test runs in a tenant of its own, so that its definition labels
nobody else's records."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import literal_column, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.factories import breadcrumb
from tests.waiting import eventually

from cairn.context import relabel
from cairn.context.domain_store import load_domains
from cairn.context.records import load_records
from cairn.context.relabel import _RELABEL, Relabeller
from cairn.db.engine import set_tenant, tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.worker.app import NoEmbedder

SCHEMA = "context.domains.v1"
DEFINITION: dict[str, Any] = {
    "domains": [
        {
            "name": "technical",
            "triggers": ["postgresql", "connection pool", "database"],
            "tags": ["area:infra"],
            "examples": ["The database connection times out under load."],
            "isolated_from": ["anime"],
        },
        {
            "name": "anime",
            "triggers": ["lora", "character consistency"],
            "examples": ["Train a LoRA on the character sheet to keep the face consistent."],
        },
    ],
    "min_confidence": 0.1,
}
PG = "How do I fix the PostgreSQL connection pooling issue?"
LORA = "What LoRA settings work best for character consistency?"


async def _post(client: httpx.AsyncClient, **overrides: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _define(client: httpx.AsyncClient, definition: dict[str, Any]) -> str:
    return await _post(client, schema_name=SCHEMA, title="domains", context=definition)


async def _note(client: httpx.AsyncClient, question: str, tags: list[str] | None = None) -> str:
    return await _post(client, title=question, context={"text": question}, tags=tags or [])


async def _domains(client: httpx.AsyncClient, record_id: str) -> list[str]:
    response = await client.get(f"/breadcrumbs/{record_id}")
    assert response.status_code == 200, response.text
    return list(response.json()["domains"])


async def _stored(db: AsyncEngine, record_id: str) -> tuple[list[str], str | None]:
    query = text("SELECT domains, domains_version FROM breadcrumbs WHERE id = :id")
    async with db.connect() as connection:
        row = (await connection.execute(query, {"id": uuid.UUID(record_id)})).one()
    return list(row.domains), row.domains_version


async def _count(db: AsyncEngine, owner: uuid.UUID) -> int:
    query = text("SELECT count(*) FROM breadcrumbs WHERE owner_id = :owner")
    async with db.connect() as connection:
        return int((await connection.execute(query, {"owner": owner})).scalar_one())


@pytest.mark.parametrize(
    ("definition", "path"),
    [
        ({"domains": [{"name": "a"}, {"name": "a"}]}, "context.domains[1].name"),
        (
            {"domains": [{"name": "a", "isolated_from": ["b"]}]},
            "context.domains[0].isolated_from[0]",
        ),
        ({"domains": [{"name": "a", "triggers": "lora"}]}, "context.domains[0].triggers"),
        ({"domains": [{"name": "a", "isolatedFrom": ["b"]}]}, "context.domains[0]"),
        ({"domains": [{"name": "has space"}]}, "context.domains[0].name"),
        ({"domains": [], "min_confidence": 2}, "context.min_confidence"),
        ({}, "context"),
    ],
)
async def test_an_invalid_definition_is_refused_with_its_path_and_nothing_is_written(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID, definition: Any, path: str
) -> None:
    response = await client.post(
        "/breadcrumbs", json=breadcrumb(schema_name=SCHEMA, context=definition)
    )
    assert response.status_code == 422, response.text
    assert response.json()["path"] == path, response.json()
    assert await _count(db, tenant) == 0


async def test_an_update_making_a_definition_invalid_is_refused(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    definition_id = await _define(client, DEFINITION)
    broken = {"domains": [*DEFINITION["domains"], {"name": "anime"}]}
    response = await client.patch(f"/breadcrumbs/{definition_id}", json={"context": broken})
    assert response.status_code == 422, response.text
    assert response.json()["path"] == "context.domains[2].name"
    stored = await client.get(f"/breadcrumbs/{definition_id}")
    assert stored.json()["version"] == 1


async def test_records_are_labelled_when_written(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID
) -> None:
    definition_id = await _define(client, DEFINITION)
    pg, lora = await _note(client, PG), await _note(client, LORA)
    tagged = await _note(client, "The weather was mild on Tuesday.", ["area:infra"])
    plain = await _note(client, "Bake the sourdough at 230 degrees for forty minutes.")
    assert await _domains(client, pg) == ["technical"]
    assert await _domains(client, lora) == ["anime"]
    assert await _domains(client, tagged) == ["technical"]
    assert await _domains(client, plain) == []
    checksum = (await client.get(f"/breadcrumbs/{definition_id}/full")).json()["checksum"]
    assert (await _stored(db, pg))[1] == checksum
    assert await _stored(db, definition_id) == ([], None)  # definitions are not labelled
    # A tag added later labels the record at once.
    await client.post(f"/breadcrumbs/{plain}/tags/add", json={"tags": ["domain:anime"]})
    assert await _domains(client, plain) == ["anime"]


async def test_a_record_its_content_does_not_place_takes_the_domain_its_neighbours_agree_on(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await _define(client, DEFINITION)
    weather = "The weather was mild on Tuesday, with a light breeze from the sea."
    for tag in ("area:infra", "domain:technical"):
        await _note(client, weather, [tag])
    await _note(client, "Train the LoRA for twelve epochs.", ["domain:anime"])
    near = await _note(client, "On Tuesday the weather was mild and a light sea breeze blew.")
    assert await _domains(client, near) == ["technical"]
    far = await _note(client, "Bake the sourdough at 230 degrees for forty minutes.")
    assert await _domains(client, far) == []


async def test_a_tenant_without_a_definition_stores_no_labels(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID
) -> None:
    record = await _note(client, PG, ["domain:technical"])
    assert await _domains(client, record) == []
    assert await _stored(db, record) == ([], None)


async def test_records_are_relabelled_when_the_definition_changes_and_cleared_when_deleted(
    client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID
) -> None:
    pg, lora = await _note(client, PG), await _note(client, LORA)
    definition_id = await _define(client, DEFINITION)  # after the records: the relabel's job
    labelled = {"technical": [pg], "anime": [lora]}

    async def labelled_as(expected: dict[str, list[str]]) -> bool:
        found: dict[str, list[str]] = {}
        for record in (pg, lora):
            for name in await _domains(client, record):
                found.setdefault(name, []).append(record)
        return found == expected

    await eventually(lambda: labelled_as(labelled), timeout=30)
    swapped = {
        "domains": [
            {"name": "databases", "triggers": ["postgresql"]},
            {"name": "art", "triggers": ["lora"]},
        ]
    }
    response = await client.patch(f"/breadcrumbs/{definition_id}", json={"context": swapped})
    assert response.status_code == 200, response.text
    await eventually(lambda: labelled_as({"databases": [pg], "art": [lora]}), timeout=30)
    assert (await client.delete(f"/breadcrumbs/{definition_id}")).status_code == 200
    await eventually(lambda: labelled_as({}), timeout=30)
    assert await _stored(db, pg) == ([], None)


async def test_a_relabel_labels_by_neighbours_what_its_first_pass_left_unlabelled(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    """Written before any definition, the record's neighbours are relabelled with it, in
    one batch: only a later look finds them labelled."""
    near = await _note(client, "On Tuesday the weather was mild and a light sea breeze blew.")
    weather = "The weather was mild on Tuesday, with a light breeze from the sea."
    tagged = [await _note(client, weather, [tag]) for tag in ("area:infra", "domain:technical")]
    far = await _note(client, "Bake the sourdough at 230 degrees for forty minutes.")
    await _define(client, DEFINITION)

    async def placed() -> bool:
        return await _domains(client, near) == ["technical"]

    await eventually(placed, timeout=30)
    assert all([await _domains(client, record) == ["technical"] for record in tagged])
    assert await _domains(client, far) == []


async def test_load_domains_and_records_carry_the_labels(
    app: FastAPI, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, tenant) as session:
        assert await load_domains(session, tenant, resources.embedder) is None
    await _define(client, DEFINITION)
    pg = uuid.UUID(await _note(client, PG))
    async with tenant_session(resources.session_factory, tenant) as session:
        domains = await load_domains(session, tenant, resources.embedder)
        records = await load_records(session, tenant, [pg], frozenset())
    assert domains is not None and domains.names == ("anime", "technical")
    assert domains.isolated("technical", "anime")
    assert all(domain.centroid is not None for domain in domains.domains)  # examples embedded
    assert domains.classify(LORA).domain == "anime"
    assert records[pg].domains == ("technical",)


async def _centroid_versions(db: AsyncEngine, owner: uuid.UUID) -> list[tuple[str, str]]:
    query = text("SELECT version, domain FROM domain_centroids WHERE owner_id = :owner")
    async with db.connect() as connection:
        return sorted(tuple(row) for row in await connection.execute(query, {"owner": owner}))


async def test_a_process_without_an_encoder_reads_the_stored_example_centroids(
    app: FastAPI, client: httpx.AsyncClient, db: AsyncEngine, tenant: uuid.UUID
) -> None:
    definition_id = await _define(client, DEFINITION)
    checksum = (await client.get(f"/breadcrumbs/{definition_id}/full")).json()["checksum"]
    assert await _centroid_versions(db, tenant) == [(checksum, "anime"), (checksum, "technical")]
    async with tenant_session(app.state.resources.session_factory, tenant) as session:
        domains = await load_domains(session, tenant, NoEmbedder())  # as the worker
    assert domains is not None and all(d.centroid is not None for d in domains.domains)
    (vector,) = await app.state.resources.embedder.embed([PG])
    assert domains.classify("", embedding=vector).domain == "technical"  # by examples alone
    # A definition replaced: the former one's centroids go with the relabel.
    await client.patch(f"/breadcrumbs/{definition_id}", json={"context": {"domains": []}})
    await eventually(lambda: _centroids_gone(db, tenant), timeout=30)


async def _centroids_gone(db: AsyncEngine, owner: uuid.UUID) -> bool:
    return await _centroid_versions(db, owner) == []


async def test_example_centroids_are_isolated_by_tenant(
    app: FastAPI, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await _define(client, DEFINITION)
    other = uuid.uuid4()
    engine = app.state.resources.engine  # the application role, under row-level security
    await ensure_tenant(engine, other, f"domains-{other}")
    async with engine.connect() as connection, connection.begin():
        await set_tenant(connection, other)
        assert (await connection.execute(text("SELECT * FROM domain_centroids"))).all() == []
    with pytest.raises(DBAPIError, match="row-level security"):
        async with engine.begin() as connection:
            await set_tenant(connection, other)
            await connection.execute(
                text(
                    "INSERT INTO domain_centroids (owner_id, version, domain, centroid)"
                    " VALUES (:owner, 'v', 'd', :vector)"
                ),
                {"owner": tenant, "vector": str([0.0] * 384)},
            )


async def test_a_relabel_batch_that_fails_changes_nothing_and_a_later_run_finishes(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: AsyncEngine,
    tenant: uuid.UUID,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crash inside the batch's transaction (here: its UPDATE fails half-way, for every
    relabeller of this process) rolls it back; the next run starts from the same records."""
    pg, lora = await _note(client, PG), await _note(client, LORA)
    failing = _RELABEL.values(version=literal_column("1 / (version - version)"))
    monkeypatch.setattr(relabel, "_RELABEL", failing)
    await _define(client, DEFINITION)
    resources = app.state.resources
    relabeller = Relabeller(resources.system_sessions, resources.embedder, batch=1)
    with pytest.raises(DBAPIError, match="division by zero"):
        while True:
            await relabeller.run_once()
    assert await _stored(db, pg) == ([], None) and await _stored(db, lora) == ([], None)
    monkeypatch.undo()
    await eventually(lambda: _labelled_both(client, pg, lora), timeout=30)


async def _labelled_both(client: httpx.AsyncClient, pg: str, lora: str) -> bool:
    return await _domains(client, pg) == ["technical"] and await _domains(client, lora) == ["anime"]
