"""Long records and their chunks, against the real database and model: stored on create,
replaced on PATCH, removed when the text becomes short, and what lets searches and the
semantic seeds find a long record by a passage far from its start."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import httpx
import numpy as np
from fastapi import FastAPI
from sqlalchemy import text
from tests.factories import breadcrumb, long_note

from cairn.api.app import create_app
from cairn.config import Settings
from cairn.context.agents import SemanticSource
from cairn.context.sources.semantic import semantic_seeds
from cairn.context.trigger import Probe
from cairn.db.engine import tenant_session
from cairn.embedding import HashEmbedder
from cairn.processing.retry import RetryJob

QUESTION = "When is the technician coming to repair the broken coffee machine at work?"
SHORT_NOTES = (
    "The quarterly budget review moved to the second floor meeting room.",
    "Remember to renew the parking permits before the end of the month.",
    "The new intern starts on Wednesday and needs a laptop and a badge.",
)


async def _chunks(db: Any, record_id: str) -> list[dict[str, Any]]:
    async with db.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT ordinal, char_start, char_end, text FROM breadcrumb_chunks"
                " WHERE breadcrumb_id = :id ORDER BY ordinal"
            ),
            {"id": record_id},
        )
        return [dict(row) for row in rows.mappings()]


async def _post_note(client: httpx.AsyncClient, note: str, **overrides: Any) -> str:
    body = breadcrumb(title="Garden diary", description=None, context={"text": note})
    response = await client.post("/breadcrumbs", json=body | overrides)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_a_long_record_is_stored_with_overlapping_chunks_of_its_text(
    client: httpx.AsyncClient, tenant: uuid.UUID, db: Any
) -> None:
    record_id = await _post_note(client, long_note())
    llm_text = (await client.get(f"/breadcrumbs/{record_id}/full")).json()["llm_text"]
    chunks = await _chunks(db, record_id)
    assert len(chunks) >= 3
    assert [c["ordinal"] for c in chunks] == list(range(len(chunks)))
    assert all(llm_text[c["char_start"] : c["char_end"]] == c["text"] for c in chunks)
    assert chunks[0]["char_start"] == 0 and chunks[-1]["char_end"] == len(llm_text)
    # Neighbours overlap, so a sentence cut by one window's edge is whole in the next.
    assert all(a["char_end"] > b["char_start"] for a, b in pairwise(chunks))
    short_id = await _post_note(client, SHORT_NOTES[0])
    assert await _chunks(db, short_id) == []


async def test_patch_replaces_the_chunks_and_shortening_removes_them(
    client: httpx.AsyncClient, tenant: uuid.UUID, db: Any
) -> None:
    record_id = await _post_note(client, long_note())
    url = f"/breadcrumbs/{record_id}"
    new_tail = "Finally, the heron returned to the pond and took two of the goldfish."
    assert (await client.patch(url, json={"context": {"text": long_note(40, new_tail)}})).is_success
    chunks = await _chunks(db, record_id)
    assert "heron" in chunks[-1]["text"] and not any("espresso" in c["text"] for c in chunks)
    assert (await client.patch(url, json={"tags": ["garden"]})).is_success  # text unchanged
    assert await _chunks(db, record_id) == chunks
    assert (await client.patch(url, json={"context": {"text": "Watered."}})).is_success
    assert await _chunks(db, record_id) == []


async def test_deleting_a_record_deletes_its_chunks(
    client: httpx.AsyncClient, tenant: uuid.UUID, db: Any
) -> None:
    record_id = await _post_note(client, long_note())
    assert (await client.delete(f"/breadcrumbs/{record_id}")).is_success
    assert await _chunks(db, record_id) == []


async def _tail_document(client: httpx.AsyncClient) -> tuple[str, float]:
    """A long record answering QUESTION in its last sentence, among short notes; and how
    similar the question is to the record's own vector (its first window)."""
    record_id = await _post_note(client, long_note())
    for note in SHORT_NOTES:
        await _post_note(client, note, title="Office note")
    own = (await client.get(f"/breadcrumbs/{record_id}/full")).json()["embedding"]
    question = await _question_vector(client)
    return record_id, float(np.dot(own, question))


async def _question_vector(client: httpx.AsyncClient) -> list[float]:
    probe = await client.post(
        "/breadcrumbs", json=breadcrumb(title=QUESTION, description=None, context={})
    )
    vector: list[float] = (await client.get(f"/breadcrumbs/{probe.json()['id']}/full")).json()[
        "embedding"
    ]
    await client.delete(f"/breadcrumbs/{probe.json()['id']}")
    return vector


async def test_vector_search_finds_a_long_record_by_a_passage_near_its_end(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    record_id, own = await _tail_document(client)
    for params in ({}, {"schema_name": "note.v1"}):  # the HNSW path and the exact one
        hits = (await client.get("/breadcrumbs/search", params={"q": QUESTION} | params)).json()
        assert hits[0]["id"] == record_id
        assert hits[0]["score"] > own + 0.15  # the chunk's similarity, not the record's


async def test_hybrid_search_finds_a_long_record_by_a_passage_near_its_end(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    record_id, own = await _tail_document(client)
    params = {"q": QUESTION, "mode": "hybrid"}
    hits = (await client.get("/breadcrumbs/search", params=params)).json()
    assert hits[0]["id"] == record_id and hits[0]["similarity"] > own + 0.15


async def test_a_long_record_is_a_semantic_seed_by_its_best_chunk(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    record_id, own = await _tail_document(client)
    threshold = own + 0.1  # out by its own vector, in by its best chunk
    source = SemanticSource(enabled=True, limit=5, min_similarity=threshold)
    probe = Probe(uuid.uuid4(), QUESTION, await _question_vector(client))
    resources = app.state.resources
    async with tenant_session(resources.session_factory, tenant) as session:
        batch = await semantic_seeds(session, tenant, probe, source, [], [], frozenset())
    assert [str(seed.record_id) for seed in batch.seeds][:1] == [record_id]


class ChunkFailingEmbedder:
    """Embeds one text at a time, fails a batch (the chunks) until told to work."""

    def __init__(self) -> None:
        self.working = False
        self.inner = HashEmbedder()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) > 1 and not self.working:
            raise RuntimeError("model unavailable")
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _chunked_stage(db: Any, record_id: str) -> tuple[str, int, str | None]:
    query = text(
        "SELECT state, attempts, last_error FROM record_processing"
        " WHERE breadcrumb_id = :id AND stage = 'chunked'"
    )
    async with db.connect() as connection:
        row = (await connection.execute(query, {"id": record_id})).one()
    return (row.state, row.attempts, row.last_error)


async def test_failed_chunks_are_recorded_and_the_retry_job_fills_them(
    settings: Settings, db: Any
) -> None:
    embedder = ChunkFailingEmbedder()
    app = create_app(settings, embedder=embedder, migrate=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            record_id = await _post_note(client, long_note())  # 201: the write goes on
            url = f"/breadcrumbs/{record_id}/full"
            assert (await client.get(url)).json()["embedding"] is not None  # its own vector
            assert await _chunks(db, record_id) == []
            error = "RuntimeError: model unavailable"
            assert await _chunked_stage(db, record_id) == ("failed", 1, error)
            resources = app.state.resources
            job = RetryJob(resources.system_sessions, resources.session_factory, embedder)
            await job.run_once()  # still failing: one more attempt, backed off
            assert await _chunked_stage(db, record_id) == ("failed", 2, error)
            await _due_now(db, record_id)
            embedder.working = True
            while await job.run_once():
                pass
            assert len(await _chunks(db, record_id)) >= 3
            assert (await _chunked_stage(db, record_id))[0] == "done"


async def _due_now(db: Any, record_id: str) -> None:
    """Skip the backoff (its length is the retry job's own test)."""
    async with db.begin() as connection:
        await connection.execute(
            text(
                "UPDATE record_processing SET next_attempt_at = now()"
                " WHERE breadcrumb_id = :id AND stage = 'chunked'"
            ),
            {"id": record_id},
        )
