"""Embeddings follow the content: re-embedded on PATCH, NULL on failure, filled in later."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
from tests.factories import breadcrumb

from cairn.api.app import create_app
from cairn.config import Settings
from cairn.embedding import HashEmbedder
from cairn.processing.retry import RetryJob


async def test_patch_of_context_re_embeds_and_re_keys(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    before = (await client.get(f"{url}/full")).json()
    await client.patch(url, json={"context": {"text": "Invoices for the Lisbon office"}})
    after = (await client.get(f"{url}/full")).json()
    assert after["embedding"] != before["embedding"]
    assert "lisbon" in after["entity_keywords"] and "migration" not in after["entity_keywords"]
    assert "Lisbon" in after["llm_text"]


async def test_patch_of_tags_only_keeps_the_embedding(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    before = (await client.get(f"{url}/full")).json()
    await client.patch(url, json={"tags": ["invoices"]})
    after = (await client.get(f"{url}/full")).json()
    assert after["embedding"] == before["embedding"]
    assert after["entity_keywords"][0] == "invoices"


class FlakyEmbedder:
    """Fails until told to work, like a model that is briefly unavailable."""

    def __init__(self) -> None:
        self.working = False
        self.inner = HashEmbedder()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not self.working:
            raise RuntimeError("model unavailable")
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_failed_embedding_stores_null_then_is_retried(settings: Settings) -> None:
    embedder = FlakyEmbedder()
    app = create_app(settings, embedder=embedder, migrate=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post("/breadcrumbs", json=breadcrumb(title="Unembedded"))
            assert response.status_code == 201  # the write never waits on the model
            url = f"/breadcrumbs/{response.json()['id']}/full"
            assert (await client.get(url)).json()["embedding"] is None
            embedder.working = True
            resources = app.state.resources
            job = RetryJob(resources.system_sessions, resources.session_factory, embedder)
            while await job.run_once():
                pass
            embedding = (await client.get(url)).json()["embedding"]
            assert embedding is not None and len(embedding) == 384
