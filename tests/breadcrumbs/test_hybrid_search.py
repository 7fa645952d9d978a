"""``GET /breadcrumbs/search?mode=hybrid``, and what hybrid search and on-demand contexts do
when the embedder is down (vector mode keeps its 503)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import httpx
import pytest
from tests.factories import breadcrumb

from cairn.api.app import create_app
from cairn.config import Settings


class DownEmbedder:
    """A model that fails every call."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model unavailable")

    async def aclose(self) -> None:
        return None


async def test_hybrid_ranks_a_rare_word_first_with_its_score_parts(
    client: httpx.AsyncClient, marker: str
) -> None:
    bodies = [
        breadcrumb(title="Trip", tags=[marker], context={"text": "We hiked up the mountain"}),
        breadcrumb(title="Trip", tags=[marker], context={"text": "Our guide was called Zephyrine"}),
    ]
    for body in bodies:
        assert (await client.post("/breadcrumbs", json=body)).status_code == 201
    params = {"q": "who was Zephyrine", "tag": marker, "mode": "hybrid", "nn": 2}
    response = await client.get("/breadcrumbs/search", params=params)
    assert response.status_code == 200, response.text
    assert "X-Cairn-Degraded" not in response.headers
    hits = response.json()
    assert len(hits) == 2
    assert hits[0]["context"] is None and "Zephyrine" not in str(hits[1])
    top = hits[0]
    assert top["lexical"] > 0 and top["similarity"] is not None
    assert top["similarity"] <= top["score"] <= 1
    assert hits[1]["lexical"] == 0
    vector = await client.get("/breadcrumbs/search", params=params | {"mode": "vector"})
    assert vector.json()[0].get("lexical") is None


async def test_hybrid_needs_text(client: httpx.AsyncClient) -> None:
    for params in ({"mode": "hybrid"}, {"mode": "hybrid", "qvec": "1,0"}, {"mode": "rrf"}):
        response = await client.get("/breadcrumbs/search", params={**params})
        assert response.status_code in (400, 422), response.text
        assert set(response.json()) >= {"error", "detail"}


@pytest.fixture
async def embedder_down(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, embedder=DownEmbedder(), migrate=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


async def test_with_the_embedder_down_hybrid_and_queries_degrade_vector_fails(
    embedder_down: httpx.AsyncClient, marker: str
) -> None:
    client = embedder_down
    body = breadcrumb(title="Pets", tags=[marker], context={"text": "Marguerite adopted a ferret"})
    assert (await client.post("/breadcrumbs", json=body)).status_code == 201  # stored unembedded
    params = {"q": "Marguerite ferret", "tag": marker}
    vector = await client.get("/breadcrumbs/search", params=params)
    assert vector.status_code == 503
    hybrid = await client.get("/breadcrumbs/search", params=params | {"mode": "hybrid"})
    assert hybrid.status_code == 200, hybrid.text
    assert hybrid.headers["X-Cairn-Degraded"] == "embedding"
    (hit,) = hybrid.json()
    assert hit["similarity"] is None and hit["lexical"] > 0 and hit["title"] == "Pets"
    sources = {"semantic": {"enabled": True, "limit": 5}, "session": {"limit": 0}}
    ask = {"query": "Who adopted a ferret?", "agent": {"context_sources": sources}}
    response = await client.post("/contexts/query", json=ask)
    assert response.status_code == 200, response.text
    assert response.headers["X-Cairn-Degraded"] == "embedding"
    answer = response.json()
    assert answer["degraded"] == ["embedding"]
    assert "Marguerite adopted a ferret" in answer["formatted_context"]
    again = (await client.post("/contexts/query", json=ask)).json()
    assert again["cache_hit"] is False  # a degraded answer is not kept
