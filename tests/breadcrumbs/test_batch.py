"""POST /breadcrumbs/batch against the real database and NATS: per-record results, replays
of whole batches and of single records, the limits, embeddings a forward pass a call, events."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from tests.factories import breadcrumb
from tests.stream.sse_client import sse

BATCH = "/breadcrumbs/batch"


def notes(marker: str, count: int, **overrides: Any) -> list[dict[str, Any]]:
    """``count`` valid, distinct records tagged ``marker``."""
    return [
        breadcrumb(
            **{"title": f"note {n} {marker}", "tags": [marker], "context": {"n": n}} | overrides
        )
        for n in range(count)
    ]


async def stored(app: FastAPI, marker: str) -> list[dict[str, Any]]:
    """The records tagged ``marker``, in created_at order, with their history and events."""
    query = text(
        "SELECT b.id::text, b.title, b.embedding IS NOT NULL AS embedded,"
        " (SELECT count(*) FROM breadcrumb_history h WHERE h.breadcrumb_id = b.id) AS history,"
        " (SELECT count(*) FROM outbox o WHERE o.payload->>'breadcrumb_id' = b.id::text)"
        " AS events FROM breadcrumbs b WHERE :marker = ANY(b.tags) ORDER BY b.created_at"
    )
    async with app.state.resources.system_engine.connect() as connection:
        rows = await connection.execute(query, {"marker": marker})
        return [dict(row._mapping) for row in rows]


async def post_batch(
    client: httpx.AsyncClient, records: Sequence[Any], **params: str
) -> httpx.Response:
    return await client.post(BATCH, json={"records": list(records)}, params=params)


async def test_valid_records_are_written_and_invalid_ones_answered_in_order(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    good = notes(marker, 3)
    records = [
        good[0],
        {**good[1], "title": ""},  # too short
        breadcrumb(schema_name="bad schema", tags=[marker]),
        good[1],
        {"context": {}, "tags": [marker]},  # no title
        breadcrumb(tags=[marker], context={"x": "y" * 300_000}),  # over max_context_bytes
        good[2],
    ]
    response = await post_batch(client, records)
    assert response.status_code == 200, response.text
    answer = response.json()
    results = answer["results"]
    assert [r["index"] for r in results] == list(range(7))
    assert [r["status"] for r in results] == [201, 422, 422, 201, 422, 413, 201]
    assert results[4]["error"] == "invalid_input" and "title" in results[4]["detail"]
    assert results[2]["detail"].startswith("schema_name")
    assert "id" not in results[1] and "error" not in results[0]
    assert (answer["created"], answer["replayed"], answer["failed"]) == (3, 0, 4)
    rows = await stored(app, marker)
    assert [row["id"] for row in rows] == [results[i]["id"] for i in (0, 3, 6)]
    assert [row["title"] for row in rows] == [g["title"] for g in good]  # created_at order
    assert all(row["embedded"] and row["history"] == 1 and row["events"] == 1 for row in rows)


async def test_a_repeated_batch_replays_every_record(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    records = [{**r, "idempotency_key": f"{marker}-{n}"} for n, r in enumerate(notes(marker, 4))]
    first = (await post_batch(client, records)).json()
    again = (await post_batch(client, records)).json()
    assert [r["status"] for r in first["results"]] == [201] * 4
    assert [r["status"] for r in again["results"]] == [200] * 4
    assert [r["id"] for r in again["results"]] == [r["id"] for r in first["results"]]
    assert (again["created"], again["replayed"]) == (0, 4)
    assert len(await stored(app, marker)) == 4


async def test_keys_are_shared_with_single_creates_and_checked_within_a_batch(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    alone, other = notes(marker, 2)
    key = f"{marker}-alone"
    posted = await client.post("/breadcrumbs", json=alone, headers={"Idempotency-Key": key})
    fresh = f"{marker}-fresh"
    records = [
        {**alone, "idempotency_key": key},  # replays the single create
        {**other, "idempotency_key": key},  # that key, another body
        {**other, "idempotency_key": fresh},
        {**other, "idempotency_key": fresh},  # a repeat within the batch
        {**alone, "idempotency_key": fresh},  # the batch's key, another body
        {**other, "idempotency_key": 7},
    ]
    results = (await post_batch(client, records)).json()["results"]
    assert [r["status"] for r in results] == [200, 409, 201, 200, 409, 422]
    assert results[0]["id"] == posted.json()["id"]
    assert results[3]["id"] == results[2]["id"] and results[1]["error"] == "conflict"
    replayed = await client.post("/breadcrumbs", json=other, headers={"Idempotency-Key": fresh})
    assert replayed.status_code == 201 and replayed.json()["id"] == results[2]["id"]
    assert len(await stored(app, marker)) == 2


async def test_more_records_than_the_limit_are_refused_and_nothing_is_written(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    records = [{"title": f"r{n}", "context": {}, "tags": [marker]} for n in range(1001)]
    response = await post_batch(client, records)
    assert response.status_code == 413, response.text
    assert response.json()["error"] == "payload_too_large" and "1000" in response.json()["detail"]
    assert await stored(app, marker) == []
    empty = await post_batch(client, [])
    assert empty.status_code == 422


async def test_atomic_batches_write_all_or_nothing(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    records = [*notes(marker, 2), {"title": "no context", "tags": [marker]}]
    refused = await post_batch(client, records, atomic="true")
    assert refused.status_code == 422, refused.text
    assert [r["index"] for r in refused.json()["results"]] == [2]
    assert await stored(app, marker) == []
    accepted = await post_batch(client, records[:2], atomic="true")
    assert accepted.status_code == 200 and accepted.json()["created"] == 2


async def test_a_batch_may_exceed_the_single_request_body_limit(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    """max_body_bytes (1 MiB) bounds single creates; batches have max_batch_body_bytes."""
    # Few large records (each under max_context_bytes), so that little is embedded.
    filler = "harbour " * 18_000
    records = [{**record, "context": {"log": filler}} for record in notes(marker, 8)]
    assert len(str(records)) > 1024 * 1024
    response = await post_batch(client, records)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["created"] == 8
    too_big = await client.post(BATCH, content=b" " * (17 * 1024 * 1024))
    assert too_big.status_code == 413


async def test_the_embeddings_of_a_batch_are_computed_a_forward_pass_a_call(
    client: httpx.AsyncClient, app: FastAPI, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = app.state.resources.embedder
    calls: list[int] = []
    embed = embedder.embed

    async def counted(texts: Sequence[str]) -> list[list[float]]:
        calls.append(len(texts))
        return await embed(texts)

    monkeypatch.setattr(embedder, "embed", counted)
    response = await post_batch(client, notes(marker, 70))
    assert response.json()["created"] == 70
    assert calls == [32, 32, 6]
    assert all(row["embedded"] for row in await stored(app, marker))


async def test_every_created_record_reaches_the_event_stream(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(live_url, {"any_tags": marker}) as stream:
        results = (await post_batch(client, notes(marker, 5))).json()["results"]
        events = await stream.events_until(5)
    assert [event["breadcrumb_id"] for _, event in events] == [r["id"] for r in results]
    assert {event["type"] for _, event in events} == {"breadcrumb.created"}


async def test_the_worker_builds_edges_between_records_of_one_batch(
    worker: None, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    from tests.waiting import eventually

    session = f"session:{uuid.uuid4().hex[:8]}"
    records = notes(marker, 3, tags=[marker, session])
    ids = [r["id"] for r in (await post_batch(client, records)).json()["results"]]
    query = text(
        "SELECT from_id::text, to_id::text FROM breadcrumb_edges"
        " WHERE edge_type = 1 AND to_id = ANY(CAST(:ids AS uuid[]))"
    )

    async def temporal_chain() -> bool:
        async with app.state.resources.system_engine.connect() as connection:
            found = {tuple(row) for row in await connection.execute(query, {"ids": ids})}
        return found == {(ids[0], ids[1]), (ids[1], ids[2])}

    await eventually(temporal_chain, timeout=20)


async def test_a_failing_embedder_leaves_the_rest_of_the_batch_unembedded_but_written(
    client: httpx.AsyncClient, app: FastAPI, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = app.state.resources.embedder
    calls: list[int] = []
    embed = embedder.embed

    async def failing_after_one(texts: Sequence[str]) -> list[list[float]]:
        calls.append(len(texts))
        if len(calls) > 1:
            raise RuntimeError("the encoder fell over")
        return await embed(texts)

    monkeypatch.setattr(embedder, "embed", failing_after_one)
    response = await post_batch(client, notes(marker, 40))
    assert response.json()["created"] == 40
    assert calls == [32, 8]
    rows = await stored(app, marker)
    assert [row["embedded"] for row in rows] == [True] * 32 + [False] * 8
