"""llm_hints over HTTP against the real database: the transformed view, schema definitions
and their invalidation, 422 for hints that do not compile, the batch render and llm_text."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.factories import breadcrumb, schema_definition

from cairn.db.models import breadcrumbs

FORMAT = {"transform": {"line": {"type": "format", "format": "{who}: {text}"}}}


@pytest.fixture
def schema(marker: str) -> str:
    """A schema name no other test uses (the database is shared by the session)."""
    return f"t{marker.split(':')[1]}.v1"


async def _create(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    ident: str = response.json()["id"]
    return ident


async def _view(client: httpx.AsyncClient, ident: str, **params: Any) -> dict[str, Any]:
    response = await client.get(f"/breadcrumbs/{ident}", params=params)
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    return view


def _note(schema: str, **overrides: Any) -> dict[str, Any]:
    return breadcrumb(schema_name=schema, context={"who": "ana", "text": "deployed"}, **overrides)


async def test_get_returns_the_view_through_instance_hints(
    client: httpx.AsyncClient, schema: str
) -> None:
    ident = await _create(client, _note(schema, llm_hints=FORMAT))
    view = await _view(client, ident)
    assert view["context"] == {"line": "ana: deployed"}
    assert "transform" not in view
    full = (await client.get(f"/breadcrumbs/{ident}/full")).json()
    assert full["context"] == {"who": "ana", "text": "deployed"}  # /full stays raw


async def test_schema_definition_hints_apply_and_explain_says_so(
    client: httpx.AsyncClient, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema))
    view = await _view(client, ident, explain="true")
    assert view["context"] == {"line": "ana: deployed"}
    assert view["transform"]["source"] == "schema"
    assert view["transform"]["definition_id"] == definition and view["transform"]["applied"]


async def test_hints_in_the_definitions_context_apply_too(
    client: httpx.AsyncClient, schema: str
) -> None:
    body = schema_definition(schema, None, context={"llm_hints": FORMAT})
    await _create(client, body)
    ident = await _create(client, _note(schema))
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}


async def test_instance_hints_win_over_the_schema_definition(
    client: httpx.AsyncClient, schema: str
) -> None:
    await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema, llm_hints={"exclude": ["who"]}))
    assert (await _view(client, ident))["context"] == {"text": "deployed"}


async def test_a_definition_is_shown_without_its_own_hints(
    client: httpx.AsyncClient, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, FORMAT))
    view = await _view(client, definition)
    assert view["context"] == {"schema_name": schema} and view["llm_hints"] == FORMAT


async def test_changing_the_definition_changes_the_next_read(
    client: httpx.AsyncClient, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema))
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}  # now cached
    new_hints = {"transform": {"line": {"type": "format", "format": "{text} by {who}"}}}
    patched = await client.patch(f"/breadcrumbs/{definition}", json={"llm_hints": new_hints})
    assert patched.status_code == 200
    assert (await _view(client, ident))["context"] == {"line": "deployed by ana"}


async def test_a_newer_definition_replaces_an_older_one(
    client: httpx.AsyncClient, schema: str
) -> None:
    await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema))
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}
    await _create(client, schema_definition(schema, {"exclude": ["text"]}, title="v2"))
    assert (await _view(client, ident))["context"] == {"who": "ana"}


async def test_deleting_or_untagging_the_definition_removes_its_hints(
    client: httpx.AsyncClient, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema))
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}
    tags = {"tags": [f"defines:{schema}"]}
    assert (await client.post(f"/breadcrumbs/{definition}/tags/remove", json=tags)).is_success
    assert (await _view(client, ident))["context"] == {"who": "ana", "text": "deployed"}
    assert (await client.post(f"/breadcrumbs/{definition}/tags/add", json=tags)).is_success
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}
    assert (await client.delete(f"/breadcrumbs/{definition}")).is_success
    assert (await _view(client, ident))["context"] == {"who": "ana", "text": "deployed"}


async def test_a_definition_changed_by_another_process_is_seen_after_its_event(
    client: httpx.AsyncClient, app: FastAPI, db: AsyncEngine, schema: str
) -> None:
    definition = await _create(client, schema_definition(schema, FORMAT))
    ident = await _create(client, _note(schema))
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}  # now cached
    async with db.begin() as connection:  # another process's write: this cache is not told
        await connection.execute(
            update(breadcrumbs)
            .where(breadcrumbs.c.id == uuid.UUID(definition))
            .values(llm_hints={"exclude": ["who"]}, version=breadcrumbs.c.version + 1)
        )
    assert (await _view(client, ident))["context"] == {"line": "ana: deployed"}  # until the TTL
    transforms = app.state.resources.transforms
    assert transforms.invalidate_for_event({"schema_name": "schema.def.v1", "tags": []})
    assert (await _view(client, ident))["context"] == {"text": "deployed"}


@pytest.mark.parametrize(
    ("hints", "reason"),
    [
        ({"transform": {"x": {"type": "template", "template": "{{#each a}}"}}}, "never closed"),
        ({"transform": {"x": {"type": "extract", "value": "$["}}}, "invalid JSONPath"),
        ({"transform": {"x": {"type": "jq", "query": "."}}}, "unknown type 'jq'"),
    ],
)
async def test_hints_that_do_not_compile_are_422_and_nothing_is_written(
    client: httpx.AsyncClient, marker: str, schema: str, hints: dict[str, Any], reason: str
) -> None:
    bodies = [
        _note(schema, tags=[marker], llm_hints=hints),
        schema_definition(schema, hints, tags=[marker, f"defines:{schema}"]),
        schema_definition(schema, None, tags=[marker], context={"llm_hints": hints}),
    ]
    for body in bodies:
        response = await client.post("/breadcrumbs", json=body)
        assert response.status_code == 422, response.text
        assert response.json()["error"] == "invalid_input" and reason in response.json()["detail"]
    assert (await client.get("/breadcrumbs", params={"tag": marker})).json() == []


async def test_patch_with_hints_that_do_not_compile_is_422_and_changes_nothing(
    client: httpx.AsyncClient, schema: str
) -> None:
    ident = await _create(client, _note(schema, llm_hints=FORMAT))
    bad = {"transform": {"x": {"type": "template", "template": "{% if %}"}}}
    response = await client.patch(f"/breadcrumbs/{ident}", json={"llm_hints": bad})
    assert response.status_code == 422 and "transform.x" in response.json()["detail"]
    view = await _view(client, ident)
    assert view["version"] == 1 and view["context"] == {"line": "ana: deployed"}


async def test_unknown_keys_in_hints_are_accepted_with_a_warning(
    client: httpx.AsyncClient, schema: str
) -> None:
    ident = await _create(client, _note(schema, llm_hints={**FORMAT, "comment": "why"}))
    view = await _view(client, ident, explain="true")
    assert view["context"] == {"line": "ana: deployed"}
    assert view["transform"]["warnings"] == ["unknown key 'comment' ignored"]


async def test_a_hostile_template_is_a_200_with_the_fallback_and_the_reason(
    client: httpx.AsyncClient, schema: str
) -> None:
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    hints = {"exclude": ["who"], "transform": {"x": {"type": "template", "template": loop}}}
    ident = await _create(client, _note(schema, llm_hints=hints))
    view = await _view(client, ident, explain="true")
    assert view["context"] == {"text": "deployed"}
    assert view["transform"]["applied"] is False
    assert view["transform"]["error"] == "transform.x: limit exceeded: took longer than 50 ms"


async def test_llm_text_is_the_transformed_text(client: httpx.AsyncClient, schema: str) -> None:
    await _create(client, schema_definition(schema, {"exclude": ["text"]}))
    with_instance = await _create(client, _note(schema, llm_hints=FORMAT))
    with_schema = await _create(client, _note(schema))
    first = (await client.get(f"/breadcrumbs/{with_instance}/full")).json()
    assert first["llm_text"] == "Deploy notes\nHow the staging deploy went\nana: deployed"
    second = (await client.get(f"/breadcrumbs/{with_schema}/full")).json()
    assert second["llm_text"] == "Deploy notes\nHow the staging deploy went\nwho: ana"


async def test_patching_the_hints_re_embeds(client: httpx.AsyncClient, schema: str) -> None:
    ident = await _create(client, _note(schema))
    before = (await client.get(f"/breadcrumbs/{ident}/full")).json()
    await client.patch(f"/breadcrumbs/{ident}", json={"llm_hints": FORMAT})
    after = (await client.get(f"/breadcrumbs/{ident}/full")).json()
    assert (
        after["llm_text"].endswith("\nana: deployed") and after["embedding"] != before["embedding"]
    )


async def test_render_returns_views_in_order_once_each_and_the_missing(
    client: httpx.AsyncClient, schema: str
) -> None:
    await _create(client, schema_definition(schema, FORMAT))
    plain = await _create(client, breadcrumb(context={"a": 1}))
    hinted = await _create(client, _note(schema))
    unknown = str(uuid.uuid4())
    body = {"ids": [hinted, unknown, plain, hinted], "explain": True}
    response = await client.post("/breadcrumbs/render", json=body)
    assert response.status_code == 200
    result = response.json()
    assert [item["id"] for item in result["items"]] == [hinted, plain]
    assert result["items"][0]["context"] == {"line": "ana: deployed"}
    assert result["items"][1]["context"] == {"a": 1}
    assert [item["transform"]["source"] for item in result["items"]] == ["schema", "none"]
    assert result["missing"] == [unknown]


async def test_render_is_bounded(client: httpx.AsyncClient) -> None:
    ids = [str(uuid.uuid4()) for _ in range(101)]
    response = await client.post("/breadcrumbs/render", json={"ids": ids})
    assert response.status_code == 422 and "at most 100" in response.json()["detail"]
    assert (await client.post("/breadcrumbs/render", json={"ids": []})).status_code == 422
