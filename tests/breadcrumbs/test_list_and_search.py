"""Listing with filters and pagination; vector search by text and by vector."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from pydantic import ValidationError
from tests.factories import breadcrumb

from cairn.config import MAX_LIST_PAGE, Limits


async def _post(client: httpx.AsyncClient, **overrides: object) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_list_filters_by_tags_and_schema(client: httpx.AsyncClient, marker: str) -> None:
    a = await _post(client, tags=[marker, "red"], schema_name="a.v1")
    b = await _post(client, tags=[marker, "red", "blue"], schema_name="b.v1")
    c = await _post(client, tags=[marker, "green"], schema_name="a.v1")

    async def ids(**params: str) -> list[str]:
        response = await client.get("/breadcrumbs", params=params)
        assert response.status_code == 200
        return [item["id"] for item in response.json()]

    assert await ids(tag=marker) == [c, b, a]  # newest first
    assert await ids(tag=marker, schema_name="a.v1") == [c, a]
    assert await ids(all_tags=f"{marker},red,blue") == [b]
    assert set(await ids(tag=marker, any_tags="blue,green")) == {b, c}


async def test_list_item_shape_and_include_context(client: httpx.AsyncClient, marker: str) -> None:
    await _post(client, tags=[marker])
    items = (await client.get("/breadcrumbs", params={"tag": marker})).json()
    assert set(items[0]) == {"id", "title", "tags", "schema_name", "version", "updated_at"}
    full = await client.get("/breadcrumbs", params={"tag": marker, "include_context": "true"})
    assert full.json()[0]["context"] == breadcrumb()["context"]


async def test_list_pages_with_cursor_and_offset(client: httpx.AsyncClient, marker: str) -> None:
    posted = [await _post(client, tags=[marker], title=f"n{i}") for i in range(5)]
    seen: list[str] = []
    params = {"tag": marker, "limit": "2"}
    while True:
        response = await client.get("/breadcrumbs", params=params)
        seen += [item["id"] for item in response.json()]
        cursor = response.headers.get("X-Next-Cursor")
        if not cursor:
            break
        params["cursor"] = cursor
    assert seen == posted[::-1]
    offset = await client.get("/breadcrumbs", params={"tag": marker, "limit": "2", "offset": "2"})
    assert [item["id"] for item in offset.json()] == posted[::-1][2:4]


async def test_list_limit_default_and_maximum(client: httpx.AsyncClient) -> None:
    assert (await client.get("/breadcrumbs", params={"limit": "1001"})).status_code == 422
    assert (await client.get("/breadcrumbs", params={"limit": "0"})).status_code == 422
    assert len((await client.get("/breadcrumbs")).json()) <= 100


async def test_rcrt_clients_get_every_match_up_to_raised_list_limits(
    app: FastAPI, client: httpx.AsyncClient, marker: str
) -> None:
    """RCRT returned every match without ``limit`` and its clients never follow
    X-Next-Cursor: an operator raises the default and the cap (docs/api.md, RCRT compatibility)."""
    posted = [await _post(client, tags=[marker]) for _ in range(4)]
    limits = app.state.resources.settings.limits
    before = (limits.default_list_limit, limits.max_list_limit)
    limits.default_list_limit, limits.max_list_limit = 3, 3  # a stand-in for 100 / 1000
    try:
        capped = await client.get("/breadcrumbs", params={"tag": marker})
        limits.default_list_limit, limits.max_list_limit = 10, 10  # raised
        everything = await client.get("/breadcrumbs", params={"tag": marker})
        beyond = await client.get("/breadcrumbs", params={"tag": marker, "limit": "11"})
    finally:
        limits.default_list_limit, limits.max_list_limit = before
    assert len(capped.json()) == 3 and "X-Next-Cursor" in capped.headers
    assert sorted(item["id"] for item in everything.json()) == sorted(posted)
    assert "X-Next-Cursor" not in everything.headers
    assert beyond.status_code == 422


@pytest.mark.parametrize(
    "values",
    [
        {"default_list_limit": 2000, "max_list_limit": 1000},  # a default above the cap
        {"max_list_limit": MAX_LIST_PAGE + 1},  # one page is built in memory
        {"default_list_limit": 0},
    ],
)
def test_list_limit_settings_are_bounded(values: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        Limits(**values)


async def test_search_by_text_ranks_the_relevant_record_first(
    client: httpx.AsyncClient, marker: str
) -> None:
    cat = await _post(
        client, tags=[marker], title="Pets", context={"text": "My cat sleeps on the sofa all day"}
    )
    await _post(
        client, tags=[marker], title="Ledger", context={"text": "Quarterly revenue grew by 4%"}
    )
    response = await client.get(
        "/breadcrumbs/search", params={"q": "a sleepy kitten", "tag": marker, "nn": "2"}
    )
    assert response.status_code == 200
    hits = response.json()
    assert hits[0]["id"] == cat
    assert hits[0]["score"] > hits[1]["score"]


async def test_search_by_vector_returns_exact_neighbour(
    client: httpx.AsyncClient, marker: str
) -> None:
    target = await _post(client, tags=[marker], title="Needle", context={"text": "haystack"})
    vector = (await client.get(f"/breadcrumbs/{target}/full")).json()["embedding"]
    qvec = ",".join(str(x) for x in vector)
    hits = (await client.get("/breadcrumbs/search", params={"qvec": qvec, "nn": "1"})).json()
    assert hits[0]["id"] == target and hits[0]["score"] > 0.999
    as_json = (await client.get("/breadcrumbs/search", params={"qvec": str(vector)})).json()
    assert as_json[0]["id"] == target


async def test_filtered_search_returns_full_results(client: httpx.AsyncClient, marker: str) -> None:
    """pgvector filters after the HNSW scan; a selective filter must still fill `nn`."""
    for i in range(6):
        await _post(client, tags=[marker], schema_name="rare.v1", title=f"rare {i}")
    hits = (
        await client.get(
            "/breadcrumbs/search",
            params={"q": "staging deploy", "schema_name": "rare.v1", "tag": marker, "nn": "6"},
        )
    ).json()
    assert len(hits) == 6
    assert all(hit["schema_name"] == "rare.v1" for hit in hits)
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
