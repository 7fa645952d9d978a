"""SSE against the real server, NATS and PostgreSQL: filters, replay, deletes, framing."""

from __future__ import annotations

import json
import uuid

import httpx
from tests.factories import breadcrumb
from tests.stream.sse_client import sse


async def _post(client: httpx.AsyncClient, **overrides: object) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_frames_carry_id_and_data_and_no_event_line(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(live_url, {"any_tags": marker}) as stream:
        created = await _post(client, tags=[marker])
        frame = await stream.next_frame()
        assert "event" not in frame and int(frame["id"]) > 0
        assert frame["data"]["type"] == "breadcrumb.created"
        assert frame["data"]["breadcrumb_id"] == created
        assert not any(line.startswith("event:") for line in stream.raw)


async def test_filters_select_only_matching_events(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    session = uuid.uuid4().hex[:8]
    params = {"all_tags": f"{marker},keep", "schema_name": "chat.v1", "session": session}
    async with sse(live_url, params) as stream:
        await _post(client, tags=[marker, "keep", f"session:{session}"], schema_name="other.v1")
        await _post(client, tags=[marker, f"session:{session}"], schema_name="chat.v1")
        await _post(client, tags=[marker, "keep", "session:elsewhere"], schema_name="chat.v1")
        wanted = await _post(
            client, tags=[marker, "keep", f"session:{session}"], schema_name="chat.v1"
        )
        _, event = await stream.next_event()
        assert event["breadcrumb_id"] == wanted


async def test_json_selector_filters_on_context(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    selector = {
        "any_tags": [marker],
        "context_match": [{"path": "$.status", "op": "eq", "value": "done"}],
    }
    async with sse(live_url, {"filters": json.dumps(selector)}) as stream:
        await _post(client, tags=[marker], context={"status": "open"})
        done = await _post(client, tags=[marker], context={"status": "done"})
        _, event = await stream.next_event()
        assert event["breadcrumb_id"] == done and event["context"] == {"status": "done"}


async def test_updates_and_deletes_arrive(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(live_url, {"any_tags": marker}) as stream:
        created = await _post(client, tags=[marker])
        await client.post(f"/breadcrumbs/{created}/tags/add", json={"tags": ["more"]})
        await client.delete(f"/breadcrumbs/{created}")
        events = [event for _, event in await stream.events_until(3)]
    assert [event["type"] for event in events] == [
        "breadcrumb.created",
        "breadcrumb.updated",
        "breadcrumb.deleted",
    ]
    assert [event["version"] for event in events] == [1, 2, 2]


async def test_replay_after_disconnect_returns_exactly_the_missed_events(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(live_url, {"any_tags": marker}) as stream:
        await _post(client, tags=[marker], title="seen")
        last_id, _ = await stream.next_event()
    missed = [await _post(client, tags=[marker], title=f"missed {i}") for i in range(3)]
    headers = {"Last-Event-ID": str(last_id)}
    async with sse(live_url, {"any_tags": marker}, headers) as stream:
        replayed = await stream.events_until(3)
        assert [event["breadcrumb_id"] for _, event in replayed] == missed
        assert [seq for seq, _ in replayed] == sorted(seq for seq, _ in replayed)
        after = await _post(client, tags=[marker], title="live again")
        _, live = await stream.next_event()
        assert live["breadcrumb_id"] == after  # nothing replayed twice, nothing extra
    async with sse(live_url, {"any_tags": marker, "since": str(last_id)}) as stream:
        assert (await stream.next_event())[1]["breadcrumb_id"] == missed[0]


async def test_bad_stream_parameters_are_4xx(live_url: str) -> None:
    async with httpx.AsyncClient(base_url=live_url) as http:
        for params, headers in (
            ({"filters": "{not json"}, {}),
            ({"filters": json.dumps({"context_match": [{"path": "$.a", "op": "like"}]})}, {}),
            ({"filters": json.dumps({"any_tag": ["misspelt"]})}, {}),
            ({"filters": json.dumps({"owner_id": "00000000-0000-0000-0000-000000000002"})}, {}),
            ({"since": "-1"}, {}),
            ({}, {"Last-Event-ID": "abc"}),
        ):
            response = await http.get("/events/stream", params=params, headers=headers)
            assert response.status_code in {400, 422}, (params, response.text)
            assert set(response.json()) >= {"error", "detail"}
