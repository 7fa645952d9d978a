"""Spot checks: bad input at the edges of the HTTP API, and a webhook registered right after
the delivery process refreshed its targets."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .common import Result, Run, now
from .observe import WebhookReceiver

LONE_SURROGATE = "\\ud800"  # as JSON escapes it: valid JSON, not valid Unicode


def _note(tag: str, title: str = "bad input") -> str:
    return json.dumps({"schema_name": "note.v1", "title": title, "tags": [tag], "context": {}})


def _bad_requests(tag: str, record: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(label, method, url, request arguments); every one must get a 4xx and write nothing."""
    surrogate = _note(tag).replace('"bad input"', f'"x{LONE_SURROGATE}y"')
    nested = "[" * 2000 + "]" * 2000
    return [
        ("lone surrogate in title", "POST", "/breadcrumbs", {"content": surrogate}),
        ("NUL in title", "POST", "/breadcrumbs", {"content": _note(tag, "a\u0000b")}),
        (
            "lone surrogate in merge",
            "POST",
            f"/breadcrumbs/{record}/context/merge",
            {"content": f'{{"context": {{"k": "{LONE_SURROGATE}"}}}}'},
        ),
        ("?tag=a%00b", "GET", "/breadcrumbs?tag=a%00b", {}),
        ("?q=a%00b search", "GET", "/breadcrumbs/search?q=a%00b", {}),
        ("?tag= lone surrogate", "GET", "/breadcrumbs?tag=%ED%A0%80", {}),
        ("huge header (64 KiB)", "GET", "/breadcrumbs", {"headers": {"X-Big": "a" * 65536}}),
        ("300 headers", "GET", "/breadcrumbs", {"headers": {f"X-H{i}": "v" for i in range(300)}}),
        ("malformed JSON", "POST", "/breadcrumbs", {"content": '{"schema_name": '}),
        ("body over the limit", "POST", "/breadcrumbs", {"content": "x" * (2 * 1024 * 1024)}),
        ("bad UUID", "GET", "/breadcrumbs/not-a-uuid", {}),
        ("qvec 1e308", "GET", "/breadcrumbs/search?qvec=" + ",".join(["1e308"] * 384), {}),
        ("qvec nan", "GET", "/breadcrumbs/search?qvec=" + ",".join(["nan"] * 384), {}),
        ("filters nested 2000", "GET", "/events/stream?filters=" + nested, {}),
        ("Last-Event-ID junk", "GET", "/events/stream", {"headers": {"Last-Event-ID": "x" * 50}}),
        (
            "If-Match junk",
            "PATCH",
            f"/breadcrumbs/{record}",
            {"content": '{"title": "t"}', "headers": {"If-Match": "not-a-version"}},
        ),
        (
            "10,000 tags",
            "POST",
            "/breadcrumbs",
            {
                "content": json.dumps(
                    {
                        "schema_name": "note.v1",
                        "title": "t",
                        "tags": [tag, *map(str, range(9999))],
                        "context": {},
                    }
                )
            },
        ),
    ]


async def _status_of(http: httpx.AsyncClient, method: str, url: str, kwargs: dict[str, Any]) -> str:
    """The status (the body is not read: an SSE answer would never end), or the error."""
    headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
    try:
        async with http.stream(method, url, headers=headers, timeout=15, **kwargs) as response:
            return str(response.status_code)
    except httpx.HTTPError as error:
        return type(error).__name__


async def bad_input(run: Run) -> Result:
    result = Result("bad_input", "bad input and edge limits")
    tag = f"fault:{run.run_id}-bad"
    created = await run.http.post(
        "/breadcrumbs",
        content=_note(f"fault:{run.run_id}-ok"),
        headers={"Content-Type": "application/json"},
    )
    answers = {}
    for label, method, url, kwargs in _bad_requests(tag, created.json()["id"]):
        answers[label] = await _status_of(run.http, method, url, kwargs)
    statuses = list(answers.values())
    result.operations = len(statuses)
    result.acknowledged = sum(s.startswith("4") for s in statuses)  # refused cleanly
    result.http_5xx = result.unexpected_5xx = sum(s.startswith("5") for s in statuses)
    written = (await run.http.get("/breadcrumbs", params={"tag": tag})).json()
    result.details |= {"answers": answers, "written": len(written)}
    bad = [f"{label} → {s}" for label, s in answers.items() if not s.startswith("4")]
    result.notes.append("not 4xx: " + ("; ".join(bad) if bad else "none"))
    if written:
        result.notes.append(f"{len(written)} bad requests wrote a record")
    return result


async def _register_right_after_refresh(run: Run, url: str, round_no: int) -> str | None:
    """A write (the delivery process loads the tenant's webhook targets for it), then at once
    a new webhook, then at once an event for it: the id of that event's record."""
    warm = {"schema_name": "note.v1", "title": "warm", "tags": ["fault:wh-warm"], "context": {}}
    await run.http.post("/breadcrumbs", json=warm)
    await asyncio.sleep(0.3)
    tag = f"fault:{run.run_id}-wh{round_no}"
    agent = f"fault-wh-{run.run_id}-{round_no}"
    hook = {"url": url, "selector": {"any_tags": [tag]}}
    registered = await run.http.post(f"/agents/{agent}/webhooks", json=hook)
    registered.raise_for_status()
    body = {"schema_name": "note.v1", "title": "hook me", "tags": [tag], "context": {}}
    response = await run.http.post("/breadcrumbs", json=body)
    return str(response.json()["id"]) if response.status_code == 201 else None


async def webhook_after_write(run: Run) -> Result:
    d = run.durations
    result = Result(
        "webhook_after_write", f"webhook registered right after a write x{d.webhook_rounds}"
    )
    receiver = WebhookReceiver()
    url = await receiver.start()
    try:
        expected = []
        for round_no in range(d.webhook_rounds):
            record = await _register_right_after_refresh(run, url, round_no)
            expected += [record] if record else []
        deadline = now() + d.assembly_wait_s
        while now() < deadline and any(receiver.received[i] == 0 for i in expected):
            await asyncio.sleep(0.5)
    finally:
        await receiver.close()
    result.operations = d.webhook_rounds
    result.acknowledged = len(expected)
    result.lost = sum(1 for i in expected if receiver.received[i] == 0)
    result.duplicated = sum(receiver.received[i] - 1 for i in expected if receiver.received[i] > 1)
    result.notes.append(f"{result.lost} of {len(expected)} events never reached the webhook")
    return result
