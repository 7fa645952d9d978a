"""Every kind of bad input answers a 4xx with {error, detail} and writes nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.dbcheck import row_counts
from tests.factories import breadcrumb

BIG_CONTEXT = {"blob": "x" * (256 * 1024 + 1)}


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    root = node
    for _ in range(depth):
        node["n"] = {}
        node = node["n"]
    return root


BAD_CREATES: dict[str, tuple[Any, int]] = {
    "title is a number": (breadcrumb(title=123), 422),
    "tags is a string": (breadcrumb(tags="a,b"), 422),
    "context is a list": (breadcrumb(context=[1, 2]), 422),
    "context is a string": (breadcrumb(context="text"), 422),
    "missing title": ({k: v for k, v in breadcrumb().items() if k != "title"}, 422),
    "missing context": ({k: v for k, v in breadcrumb().items() if k != "context"}, 422),
    "empty title": (breadcrumb(title=""), 422),
    "context over 256 KiB": (breadcrumb(context=BIG_CONTEXT), 413),
    "65 tags": (breadcrumb(tags=[f"t{i}" for i in range(65)]), 422),
    "tag over 128 chars": (breadcrumb(tags=["x" * 129]), 422),
    "empty tag": (breadcrumb(tags=[""]), 422),
    "title over 512 chars": (breadcrumb(title="x" * 513), 422),
    "unknown visibility": (breadcrumb(visibility="everyone"), 422),
    "unknown sensitivity": (breadcrumb(sensitivity="top"), 422),
    "NUL in title": (breadcrumb(title="a\x00b"), 422),
    "NUL in a context key": (breadcrumb(context={"a\x00": 1}), 422),
    "NUL in a context value": (breadcrumb(context={"a": ["ok", "b\x00"]}), 422),
    "context nested too deep": (breadcrumb(context=_nested(100)), 422),
    "bad schema_name": (breadcrumb(schema_name="bad name!"), 422),
    "bad ttl": (breadcrumb(ttl="next tuesday"), 422),
    "hints not an object": (breadcrumb(llm_hints=["x"]), 422),
}


@pytest.mark.parametrize("case", list(BAD_CREATES))
async def test_bad_create_is_rejected(
    client: httpx.AsyncClient, db: AsyncEngine, case: str
) -> None:
    body, status = BAD_CREATES[case]
    before = await row_counts(db)
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == status, response.text
    assert set(response.json()) >= {"error", "detail"}
    assert await row_counts(db) == before


RAW_BODIES: dict[str, tuple[bytes, int]] = {
    "malformed JSON": (b'{"title": "x", ', 422),
    "not JSON at all": (b"hello", 422),
    "NaN in context": (b'{"title": "x", "tags": [], "context": {"v": NaN}}', 422),
    "Infinity in context": (b'{"title": "x", "tags": [], "context": {"v": Infinity}}', 422),
    "nesting beyond the parser": (b'{"title":"x","context":' + b'{"a":' * 50_000, 400),
    "body over 1 MiB": (json.dumps(breadcrumb(context={"b": "y" * 1_100_000})).encode(), 413),
}


@pytest.mark.parametrize("case", list(RAW_BODIES))
async def test_bad_raw_body_is_rejected(
    client: httpx.AsyncClient, db: AsyncEngine, case: str
) -> None:
    payload, status = RAW_BODIES[case]
    before = await row_counts(db)
    headers = {"content-type": "application/json"}
    response = await client.post("/breadcrumbs", content=payload, headers=headers)
    assert response.status_code in {status, 400, 413, 422}, response.text
    assert response.status_code == status, response.text
    assert set(response.json()) >= {"error", "detail"}
    assert await row_counts(db) == before


async def test_bad_ids_and_queries(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    before = await row_counts(db)
    checks = [
        (client.get("/breadcrumbs/not-a-uuid"), 422),
        (client.get("/breadcrumbs/not-a-uuid/full"), 422),
        (client.patch("/breadcrumbs/not-a-uuid", json={"title": "x"}), 422),
        (client.delete("/breadcrumbs/12345"), 422),
        (client.post("/breadcrumbs/not-a-uuid/tags/add", json={"tags": ["a"]}), 422),
        (client.get("/breadcrumbs/search", params={"qvec": "1,2,3"}), 422),
        (client.get("/breadcrumbs/search", params={"qvec": "a,b"}), 422),
        (client.get("/breadcrumbs/search", params={"qvec": ",".join(["0"] * 384)}), 422),
        (client.get("/breadcrumbs/search", params={"qvec": ",".join(["nan"] * 384)}), 422),
        (client.get("/breadcrumbs/search"), 400),
        (client.get("/breadcrumbs/search", params={"q": "x", "nn": "0"}), 422),
        (client.get("/breadcrumbs/search", params={"q": "x", "nn": "100000"}), 422),
        (client.get("/breadcrumbs/search", params={"q": "x", "mode": "magic"}), 422),
        (client.get("/breadcrumbs", params={"cursor": "garbage"}), 422),
        (client.get("/breadcrumbs", params={"offset": "-1"}), 422),
        (client.get("/breadcrumbs", params={"limit": "many"}), 422),
        (client.get("/nowhere"), 404),
        (client.put("/breadcrumbs"), 405),
    ]
    for request, status in checks:
        response = await request
        assert response.status_code == status, (response.request.url, response.text)
        assert set(response.json()) >= {"error", "detail"}
    assert await row_counts(db) == before


async def test_bad_updates_change_nothing(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    before = await row_counts(db)
    checks = [
        (client.patch(url, json={"tags": ["x" * 200]}), 422),
        (client.patch(url, json={"context": BIG_CONTEXT}), 413),
        (client.patch(url, json={"visibility": "world"}), 422),
        (client.patch(url, json={"title": "x"}, headers={"If-Match": "banana"}), 400),
        (client.patch(url, json={"context": None}), 422),
        (client.post(f"{url}/tags/add", json={"tags": [f"t{i}" for i in range(70)]}), 422),
        (client.post(f"{url}/tags/add", json={"tags": "a"}), 422),
        (client.post(f"{url}/context/merge", json={"context": BIG_CONTEXT}), 413),
        (client.post(f"{url}/context/merge", json={"context": [1]}), 422),
        (client.post(f"{url}/approve", json={"reason": "a\x00"}), 422),
    ]
    for request, status in checks:
        response = await request
        assert response.status_code == status, (response.request.url, response.text)
    assert await row_counts(db) == before
    assert (await client.get(url)).json()["version"] == 1


async def test_long_idempotency_key_is_rejected(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    before = await row_counts(db)
    response = await client.post(
        "/breadcrumbs", json=breadcrumb(), headers={"Idempotency-Key": "k" * 300}
    )
    assert response.status_code == 422
    assert await row_counts(db) == before
