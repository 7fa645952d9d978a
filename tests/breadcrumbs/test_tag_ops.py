"""RCRT's tag operations, merge, approve and reject: each bumps the version and is history."""

from __future__ import annotations

import httpx
from tests.factories import breadcrumb


async def _create(client: httpx.AsyncClient, **overrides: object) -> str:
    return str((await client.post("/breadcrumbs", json=breadcrumb(**overrides))).json()["id"])


async def test_tags_add_and_remove(client: httpx.AsyncClient) -> None:
    url = f"/breadcrumbs/{await _create(client, tags=['a'])}"
    added = await client.post(f"{url}/tags/add", json={"tags": ["b", "a", "c"]})
    assert added.status_code == 200 and added.json()["version"] == 2
    assert (await client.get(url)).json()["tags"] == ["a", "b", "c"]
    removed = await client.post(f"{url}/tags/remove", json={"tags": ["a", "c", "zz"]})
    assert removed.json()["version"] == 3
    assert (await client.get(url)).json()["tags"] == ["b"]
    full = (await client.get(f"{url}/full")).json()
    assert "b" in full["entity_keywords"] and "a" not in full["entity_keywords"]
    changes = [entry["change"] for entry in (await client.get(f"{url}/history")).json()]
    assert changes == ["tags.remove", "tags.add", "create"]


async def test_context_merge_is_recursive_and_replaces_arrays(client: httpx.AsyncClient) -> None:
    context = {"a": {"x": 1, "y": [1, 2]}, "keep": True}
    url = f"/breadcrumbs/{await _create(client, context=context)}"
    patch = {"a": {"y": [3], "z": "new"}, "b": 2}
    response = await client.post(f"{url}/context/merge", json={"context": patch})
    assert response.status_code == 200
    merged = (await client.get(url)).json()["context"]
    assert merged == {"a": {"x": 1, "y": [3], "z": "new"}, "keep": True, "b": 2}
    history = (await client.get(f"{url}/history")).json()
    assert history[0]["context"] == merged and history[1]["context"] == context
    assert history[0]["checksum"] != history[1]["checksum"]


async def test_approve_and_reject_retag(client: httpx.AsyncClient) -> None:
    url = f"/breadcrumbs/{await _create(client, tags=['tool', 'draft', 'pending'])}"
    assert (await client.post(f"{url}/approve", json={"reason": "ok"})).status_code == 200
    assert (await client.get(url)).json()["tags"] == ["tool", "approved", "validated"]
    assert (await client.post(f"{url}/reject")).status_code == 200
    assert (await client.get(url)).json()["tags"] == ["tool", "rejected"]
    assert (await client.get(url)).json()["version"] == 3


async def test_ops_on_unknown_id_are_404(client: httpx.AsyncClient) -> None:
    url = "/breadcrumbs/00000000-0000-0000-0000-00000000beef"
    for op, body in (("tags/add", {"tags": ["a"]}), ("context/merge", {"context": {}})):
        assert (await client.post(f"{url}/{op}", json=body)).status_code == 404
    assert (await client.post(f"{url}/approve", json={})).status_code == 404
