"""What the client sends and how it reads answers, against a scripted transport."""

from __future__ import annotations

import uuid

import httpx
import pytest
from cairn_client import AsyncClient, Client, RetryPolicy
from cairn_client.errors import InvalidInput, NotFound, VersionMismatch
from cairn_client.models import BreadcrumbUpdate
from tests.client.mock import Script, error

CREATED = {"id": str(uuid.uuid4()), "version": 1}
QUERIED = {
    "formatted_context": "## Knowledge\n- tides",
    "token_count": 7,
    "token_budget": 400,
    "breadcrumb_count": 1,
    "explain": {"selected": [], "dropped": []},
    "timings_ms": {"total": 3.5},
    "cache_hit": True,
    "degraded": ["embedding"],
}


def test_token_and_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_URL", "http://cairn.example:9000")
    monkeypatch.setenv("CAIRN_TOKEN", "t0ken")
    script = Script(httpx.Response(200, json={"status": "ok"}))
    with Client(transport=script.sync()) as cairn:
        assert cairn.health() == {"status": "ok"}
    sent = script.requests[0]
    assert str(sent.url) == "http://cairn.example:9000/health"
    assert sent.headers["authorization"] == "Bearer t0ken"


def test_an_explicit_token_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_TOKEN", "from-env")
    script = Script(httpx.Response(200, json=[]))
    with Client("http://x", token="given", transport=script.sync()) as cairn:
        cairn.list_agents()
    assert script.requests[0].headers["authorization"] == "Bearer given"


def test_creates_carry_a_fresh_idempotency_key() -> None:
    script = Script(httpx.Response(201, json=CREATED))
    with Client("http://x", transport=script.sync()) as cairn:
        first = cairn.create_breadcrumb("a", {"n": 1}, tags=["t"], schema_name="note.v1")
        cairn.create_breadcrumb("b", {})
        cairn.create_breadcrumb("c", {}, idempotency_key="mine")
    keys = [request.headers["idempotency-key"] for request in script.requests]
    assert str(uuid.UUID(keys[0])) == keys[0] and keys[0] != keys[1] and keys[2] == "mine"
    assert first.id == uuid.UUID(CREATED["id"])
    assert script.bodies()[0] == {
        "title": "a",
        "context": {"n": 1},
        "tags": ["t"],
        "schema_name": "note.v1",
    }


def test_query_context_posts_the_query_and_reads_the_answer() -> None:
    script = Script(httpx.Response(200, json=QUERIED))
    with Client("http://x", transport=script.sync()) as cairn:
        answer = cairn.query_context("tides?", agent_id="chat", session="s1", budget=400)
        cairn.query_context(trigger_id=uuid.UUID(int=5), agent={"agent_id": "x"}, no_cache=True)
    first, second = script.requests
    assert (first.method, first.url.path) == ("POST", "/contexts/query")
    assert script.bodies()[0] == {
        "query": "tides?",
        "agent_id": "chat",
        "session": "s1",
        "budget": 400,
    }
    assert "cache-control" not in first.headers
    assert script.bodies()[1] == {"trigger_id": str(uuid.UUID(int=5)), "agent": {"agent_id": "x"}}
    assert second.headers["cache-control"] == "no-cache"
    assert answer.cache_hit and answer.degraded == ["embedding"] and answer.token_count == 7


async def test_async_query_context_reads_the_same_answer() -> None:
    script = Script(httpx.Response(200, json=QUERIED))
    async with AsyncClient("http://x", transport=httpx.MockTransport(script)) as cairn:
        answer = await cairn.query_context("tides?", agent_id="chat")
    assert answer.formatted_context == QUERIED["formatted_context"]


def test_hybrid_search_sends_the_mode_and_list_parameters_comma_separated() -> None:
    hit = {
        **CREATED,
        "title": "t",
        "tags": [],
        "schema_name": None,
        "updated_at": "2026-01-01T00:00:00Z",
        "score": 0.5,
    }
    script = Script(httpx.Response(200, json=[hit]))
    with Client("http://x", transport=script.sync()) as cairn:
        hits = cairn.search("tides", mode="hybrid", nn=3, schema_name="note.v1")
        cairn.list_breadcrumbs(any_tags=["a", "b"], include_context=False)
    assert dict(script.requests[0].url.params) == {
        "q": "tides",
        "mode": "hybrid",
        "nn": "3",
        "schema_name": "note.v1",
    }
    assert dict(script.requests[1].url.params) == {"any_tags": "a,b"}
    assert hits[0].score == 0.5


def test_path_values_are_escaped() -> None:
    script = Script(httpx.Response(200, json={"ok": True}))
    with Client("http://x", transport=script.sync()) as cairn:
        cairn.delete_webhook("ops/../x", "w 1")
    assert script.requests[0].url.raw_path == b"/agents/ops%2F..%2Fx/webhooks/w%201"


def test_errors_carry_status_code_detail_and_headers() -> None:
    script = Script(
        error(404, "not_found", "no such record", **{"X-Trace": "1"}),
        error(412, "version_mismatch", "record is at version 3"),
        error(422, "invalid_input", "body.title: required"),
    )
    with Client("http://x", transport=script.sync()) as cairn:
        with pytest.raises(NotFound) as missing:
            cairn.get_breadcrumb(uuid.UUID(int=1))
        with pytest.raises(VersionMismatch) as stale:
            cairn.update_breadcrumb(uuid.UUID(int=1), BreadcrumbUpdate(title="x"), if_match=2)
        with pytest.raises(InvalidInput):
            cairn.create_breadcrumb("", {})
    assert (missing.value.status, missing.value.error) == (404, "not_found")
    assert missing.value.detail == "no such record" and missing.value.headers["x-trace"] == "1"
    assert stale.value.status == 412 and script.requests[1].headers["if-match"] == "2"
    assert script.bodies()[1] == {"title": "x"}


def test_update_sends_only_the_fields_set_and_an_explicit_null() -> None:
    script = Script(httpx.Response(200, json={**CREATED, "ok": True}))
    with Client("http://x", transport=script.sync(), retry=RetryPolicy()) as cairn:
        cairn.update_breadcrumb("b", BreadcrumbUpdate(description=None, tags=["x"]))
    assert script.bodies() == [{"description": None, "tags": ["x"]}]
