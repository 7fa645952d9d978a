"""The edge step's one-statement reads against the statements they replaced, on real records."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from tests.factories import breadcrumb, schema_definition

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.db.engine import tenant_session
from cairn.edges import repository
from cairn.edges.builder import EdgeOptions, build_edges
from cairn.edges.neighbours import find_neighbours
from cairn.edges.repository import CONTEXT_SCHEMA
from cairn.embedding import tag_pointers

# The three statements the edge builder sent before, one per part and per session tag.
_PREVIOUS = text(
    "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND tags @> ARRAY[:tag]"
    " AND id <> :me AND schema_name IS DISTINCT FROM :ctx"
    " AND (created_at, id) < (:created_at, :me) ORDER BY created_at DESC, id DESC LIMIT 1"
)
_SHARING = text(
    "SELECT id FROM breadcrumbs WHERE owner_id = :owner AND tags && :tags AND id <> :me"
    " AND schema_name IS DISTINCT FROM :ctx ORDER BY created_at DESC LIMIT :limit"
)
_NEAREST = text(
    "SELECT b.id, 1 - (b.embedding <=> me.embedding) AS similarity"
    " FROM breadcrumbs me, LATERAL (SELECT id, embedding FROM breadcrumbs"
    "   WHERE embedding IS NOT NULL AND owner_id = :owner AND id <> :me"
    "   AND schema_name IS DISTINCT FROM :ctx"
    "   ORDER BY embedding <=> me.embedding LIMIT :k) b"
    " WHERE me.id = :me AND me.embedding IS NOT NULL"
)

Found = tuple[list[uuid.UUID | None], set[uuid.UUID], set[tuple[uuid.UUID, float]]]


async def _reference(session: AsyncSession, row: Mapping[str, Any], k: int, limit: int) -> Found:
    base = {"owner": row["owner_id"], "me": row["id"], "ctx": CONTEXT_SCHEMA}
    previous = []
    for tag in (tag for tag in row["tags"] if tag.startswith("session:")):
        params = base | {"tag": tag, "created_at": row["created_at"]}
        previous.append((await session.execute(_PREVIOUS, params)).scalar())
    pointers = tag_pointers(row["tags"])
    sharing = set()
    if pointers:
        rows = await session.execute(_SHARING, base | {"tags": pointers, "limit": limit})
        sharing = {found.id for found in rows}
    await session.execute(text(f"SET LOCAL hnsw.ef_search = {max(40, 4 * k):d}"))
    rows = await session.execute(_NEAREST, base | {"k": k})
    return previous, sharing, {(found.id, float(found.similarity)) for found in rows}


async def _combined(session: AsyncSession, row: Mapping[str, Any], k: int, limit: int) -> Found:
    found = await find_neighbours(
        session,
        row,
        sessions=[tag for tag in row["tags"] if tag.startswith("session:")],
        pointers=tag_pointers(row["tags"]),
        tag_limit=limit,
        k=k if row["embedding"] is not None else None,
    )
    return found.previous, set(found.sharing), set(found.nearest)


async def _post(client: httpx.AsyncClient, **overrides: object) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def _corpus(client: httpx.AsyncClient) -> list[uuid.UUID]:
    """Two sessions interleaved, records in both, shared and private tags, one without a
    vector (an assembled context, never embedded nor linked) and one with no tags."""
    mark = uuid.uuid4().hex[:8]
    one, two, topic = f"session:a{mark}", f"session:b{mark}", f"topic{mark}"
    words = ["invoice", "deploy", "refund", "schema", "index", "retry", "webhook"]
    ids = []
    for i in range(14):
        tags = [[one], [two], [one, two, topic], [topic, f"x{mark}{i}"]][i % 4]
        text_ = " ".join(words[(i + j) % len(words)] for j in range(4 + i % 3))
        ids.append(
            await _post(client, title=f"{mark} note {i}", tags=tags, context={"text": text_})
        )
    ids.append(await _post(client, title=f"{mark} untagged", tags=[], context={"text": "x"}))
    context = breadcrumb(schema_name=CONTEXT_SCHEMA, title="ctx", tags=[one, topic])
    ids.append(await _post(client, **context | {"context": {"consumer_id": f"a{mark}"}}))
    return ids


async def test_one_statement_finds_what_the_separate_statements_found(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    """In a tenant of its own (a run of the whole suite once found different nearest
    records in the two reads): in the default one, which the whole session writes to, the
    nearest records may be found through the HNSW index, approximately, and writes between
    the two reads can change what it finds."""
    resources = app.state.resources
    owner = tenant
    ids = await _corpus(client)
    compared = 0
    for k, limit in ((5, 5), (20, 3)):
        for record_id in ids:
            async with tenant_session(resources.session_factory, owner) as session:
                async with session.begin():
                    row = await breadcrumbs.get(session, owner, record_id)
                    assert row is not None
                    expected = await _reference(session, row, k, limit)
                async with session.begin():
                    assert await _combined(session, row, k, limit) == expected
                    compared += bool(expected[0] or expected[1] or expected[2])
    assert compared >= 28  # nearly every record has neighbours of some kind


async def test_the_semantic_part_sets_the_scans_ef_search(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    record_id = await _post(client, title="ef probe", context={"text": "probe the scan width"})
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        row = await breadcrumbs.get(session, owner, record_id)
        assert row is not None
        await find_neighbours(session, row, sessions=[], pointers=[], tag_limit=5, k=30)
        assert (await session.execute(text("SHOW hnsw.ef_search"))).scalar() == "120"


async def _edges_built(session: AsyncSession, row: Mapping[str, Any]) -> set[tuple[Any, ...]]:
    """The edges ``build_edges`` writes for ``row``, read back and rolled back."""
    query = text(
        "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
        " WHERE from_id = :id OR to_id = :id"
    )
    async with session.begin():
        await build_edges(session, row, EdgeOptions())
        edges = {tuple(edge) for edge in await session.execute(query, {"id": row["id"]})}
        await session.rollback()
    return edges


async def test_the_edge_steps_read_gives_the_same_edges_as_the_whole_row(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    ids = await _corpus(client)
    linked = 0
    for record_id in ids:
        async with tenant_session(resources.session_factory, owner) as session:
            async with session.begin():
                whole = await breadcrumbs.get(session, owner, record_id)
                found = await repository.record_for_edges(session, owner, record_id)
            assert whole is not None and found.record is not None
            assert found.record["has_embedding"] == (whole["embedding"] is not None)
            columns = set(found.record) - {"has_embedding"}
            assert {key: found.record[key] for key in columns} == {
                key: whole[key] for key in columns
            }
            edges = await _edges_built(session, whole)
            assert await _edges_built(session, found.record) == edges
            linked += bool(edges)
    assert linked >= 14


async def test_the_edge_steps_read_of_a_deleted_record_still_gives_the_generation(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    definition = schema_definition(f"probe{uuid.uuid4().hex[:8]}.v1", None)
    assert (await client.post("/breadcrumbs", json=definition)).status_code == 201
    record_id = await _post(client, title="short-lived", context={"text": "gone soon"})
    assert (await client.delete(f"/breadcrumbs/{record_id}")).status_code < 300
    generation = text("SELECT generation FROM definition_generations WHERE owner_id = :owner")
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        found = await repository.record_for_edges(session, owner, record_id)
        expected = int((await session.execute(generation, {"owner": owner})).scalar() or 0)
    assert found.record is None
    assert found.generation == expected > 0
