"""Revision 0015 derives every existing record's processing state from what ``breadcrumbs``
already shows, on a database of its own migrated to 0013 first."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from tests.conftest import Services

from cairn.config import Settings
from cairn.db.engine import create_engine
from cairn.db.migrate import upgrade

VECTOR = "[" + ",".join(["0.05"] * 384) + "]"


@pytest.fixture
async def database(services: Services) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    name = f"backfill_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(services.postgres.dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = services.postgres.url.rsplit("/", 1)[0] + f"/{name}"
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        yield url, connection
    finally:
        await connection.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def _record(
    connection: asyncpg.Connection, owner: uuid.UUID, schema: str, **columns: object
) -> uuid.UUID:
    record = uuid.uuid4()
    names = ["id", "owner_id", "schema_name", "title", "context", "checksum", "size_bytes"]
    values: list[object] = [record, owner, schema, "t", "{}", "c", 2]
    names += list(columns)
    values += list(columns.values())
    marks = ", ".join(f"${n}" for n in range(1, len(values) + 1))
    await connection.execute(
        f"INSERT INTO breadcrumbs ({', '.join(names)}) VALUES ({marks})", *values
    )
    return record


async def _states(connection: asyncpg.Connection, record: uuid.UUID) -> dict[str, str]:
    rows = await connection.fetch(
        "SELECT stage, state FROM record_processing WHERE breadcrumb_id = $1", record
    )
    return {row["stage"]: row["state"] for row in rows}


async def test_existing_records_get_the_state_their_columns_show(
    database: tuple[str, asyncpg.Connection],
) -> None:
    url, connection = database
    engine = create_engine(url, Settings())
    await upgrade(engine, "0013")
    plain, labelled_tenant = uuid.uuid4(), uuid.uuid4()
    for tenant in (plain, labelled_tenant):
        await connection.execute(
            "INSERT INTO tenants (id, name) VALUES ($1, $2)", tenant, str(tenant)
        )
    centroid = "INSERT INTO domain_centroids (owner_id, version, domain, centroid)"
    await connection.execute(f"{centroid} VALUES ($1, 'v', 'x', $2)", labelled_tenant, VECTOR)
    keyed = {"llm_text": "text", "entity_keywords": ["k"]}
    whole = await _record(connection, plain, "note.v1", embedding=VECTOR, **keyed)
    unembedded = await _record(connection, plain, "note.v1", llm_text="text")
    context = await _record(connection, plain, "agent.context.v1", entity_keywords=["k"])
    await connection.execute(
        "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type) VALUES ($1, $2, $3, 1)",
        plain, unembedded, whole,
    )  # fmt: skip
    labelled = await _record(connection, labelled_tenant, "note.v1", domains_version="v", **keyed)
    unlabelled = await _record(connection, labelled_tenant, "note.v1", **keyed)
    long_text = {"llm_text": "a word " * 300, "entity_keywords": ["k"]}
    long = await _record(connection, plain, "note.v1", embedding=VECTOR, **long_text)
    await upgrade(engine)
    await engine.dispose()

    assert await _states(connection, whole) == {
        "embedded": "done", "keyed": "done", "edged": "done", "labelled": "not_needed",
        "chunked": "not_needed",
    }  # fmt: skip
    assert await _states(connection, unembedded) == {
        "embedded": "pending", "keyed": "pending", "edged": "done", "labelled": "not_needed",
        "chunked": "not_needed",
    }  # fmt: skip
    assert await _states(connection, context) == {
        "embedded": "not_needed", "keyed": "done", "edged": "not_needed", "labelled": "not_needed",
        "chunked": "not_needed",
    }  # fmt: skip
    assert (await _states(connection, long))["chunked"] == "pending"  # too long to know: cut
    assert (await _states(connection, labelled))["labelled"] == "done"
    assert await _states(connection, unlabelled) == {
        "embedded": "pending", "keyed": "done", "edged": "pending", "labelled": "pending",
        "chunked": "not_needed",
    }  # fmt: skip
    due = await connection.fetchval(
        "SELECT count(*) FROM record_processing WHERE state = 'pending'"
        " AND next_attempt_at <= now()"
    )
    # unembedded, labelled, unlabelled, long (chunked, edged): the retry job takes them now
    assert due == 2 + 2 + 3 + 2
