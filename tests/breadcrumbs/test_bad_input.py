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


LONE_SURROGATE = '"a\\ud800b"'  # a JSON escape no UTF-8 encoder (nor PostgreSQL) accepts


def _raw(template: str) -> dict[str, Any]:
    """A JSON body sent as written: the escape must reach the server unchanged."""
    content = template.replace("SURROGATE", LONE_SURROGATE)
    return {"content": content, "headers": {"content-type": "application/json"}}


SURROGATE_CREATES = {
    "title": '{"title": SURROGATE, "context": {}}',
    "tags[0]": '{"title": "x", "tags": [SURROGATE], "context": {}}',
    "context.k": '{"title": "x", "context": {"k": SURROGATE}}',
    "context key": '{"title": "x", "context": {SURROGATE: 1}}',
    "description": '{"title": "x", "description": SURROGATE, "context": {}}',
}


@pytest.mark.parametrize("field", list(SURROGATE_CREATES))
async def test_a_lone_surrogate_is_refused_naming_its_field(
    client: httpx.AsyncClient, db: AsyncEngine, field: str
) -> None:
    before = await row_counts(db)
    response = await client.post("/breadcrumbs", **_raw(SURROGATE_CREATES[field]))
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_input"
    assert "not valid Unicode" in response.json()["detail"]
    assert field.split()[0] in response.json()["detail"]
    assert await row_counts(db) == before


async def test_lone_surrogates_and_nul_in_updates_change_nothing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    before = await row_counts(db)
    for path, template in [
        (f"{url}/tags/add", '{"tags": [SURROGATE]}'),
        (f"{url}/tags/remove", '{"tags": [SURROGATE]}'),
        (f"{url}/context/merge", '{"context": {"k": SURROGATE}}'),
        (f"{url}/tags/add", '{"tags": ["a\\u0000b"]}'),
        (f"{url}/tags/remove", '{"tags": ["a\\u0000b"]}'),
        (f"{url}/approve", '{"reason": SURROGATE}'),
    ]:
        response = await client.post(path, **_raw(template))
        assert response.status_code == 422, (path, template, response.text)
    patched = await client.patch(url, **_raw('{"title": SURROGATE}'))
    assert patched.status_code == 422, patched.text
    assert await row_counts(db) == before
    assert (await client.get(url)).json()["version"] == 1


async def test_nul_in_query_parameters_is_refused(client: httpx.AsyncClient) -> None:
    for path, params in [
        ("/breadcrumbs", {"tag": "a\x00b"}),
        ("/breadcrumbs", {"schema_name": "a\x00b"}),
        ("/breadcrumbs", {"any_tags": "a,\x00"}),
        ("/breadcrumbs/search", {"q": "a\x00b"}),
        ("/breadcrumbs/search", {"q": "x", "tag": "\x00"}),
    ]:
        response = await client.get(path, params=params)
        assert response.status_code == 422, (path, params, response.text)
        assert "query" in response.json()["detail"]


async def test_nul_in_a_header_is_refused(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    before = await row_counts(db)
    headers = {"Idempotency-Key": "a\x00b"}
    response = await client.post("/breadcrumbs", json=breadcrumb(), headers=headers)
    assert response.status_code == 422, response.text
    assert "Idempotency-Key" in response.json()["detail"] or "idempotency-key" in response.text
    assert await row_counts(db) == before


@pytest.mark.parametrize("number", ["1e308", "-1e308", "1e39", "inf", "nan"])
async def test_a_query_vector_must_be_finite_in_single_precision(
    client: httpx.AsyncClient, number: str
) -> None:
    for qvec in (",".join([number] * 384), "[" + ",".join([number] * 384) + "]"):
        response = await client.get("/breadcrumbs/search", params={"qvec": qvec})
        assert response.status_code == 422, response.text


async def test_a_tiny_query_vector_still_searches(client: httpx.AsyncClient) -> None:
    """Scale does not change a cosine: a vector of tiny numbers is a direction too."""
    response = await client.get("/breadcrumbs/search", params={"qvec": ",".join(["1e-40"] * 384)})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("param", ["any_tags", "all_tags"])
async def test_too_many_tags_in_a_query_are_refused(client: httpx.AsyncClient, param: str) -> None:
    tags = ",".join(f"{i:x}" for i in range(10_000))  # commas unescaped: a 44 KB query
    response = await client.get(f"/breadcrumbs?{param}={tags}")
    assert response.status_code == 422, response.text
    assert param in response.json()["detail"] and "64" in response.json()["detail"]
    allowed = await client.get("/breadcrumbs", params={param: ",".join(["t"] * 64)})
    assert allowed.status_code == 200, allowed.text
