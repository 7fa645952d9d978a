"""The delivery policy with in-memory twins: httpx.MockTransport, a recorded sleep, a fake
clock. No network, no database."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import uuid
from typing import Any

import httpx
import pytest

from cairn.config import EventSettings
from cairn.events.selectors import Selector
from cairn.webhooks.delivery import Deliverer, Outcome, Target, signature
from cairn.webhooks.dispatch import EventDispatcher
from cairn.webhooks.targets import Loaded, TargetCache

SETTINGS = EventSettings(
    webhook_timeout_s=0.2, webhook_max_attempts=4, webhook_backoff_s=1.0, webhook_max_backoff_s=3.0
)
OWNER = uuid.uuid4()
BODY = json.dumps({"owner_id": str(OWNER), "event_id": "e-1", "tags": ["a"]}).encode()


def target(**overrides: Any) -> Target:
    fields: dict[str, Any] = {
        "webhook_id": uuid.uuid4(),
        "owner_id": OWNER,
        "agent_id": "agent-1",
        "url": "https://hooks.example.com/in",
        "secret": "topsecret",
    }
    return Target(**(fields | overrides))


class Recorder:
    """The receiver: answers from a script of statuses (then 200), recording requests."""

    def __init__(self, *statuses: int, delay_s: float = 0.0) -> None:
        self.statuses = list(statuses)
        self.delay_s = delay_s
        self.requests: list[httpx.Request] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await asyncio.sleep(self.delay_s)
        status = self.statuses.pop(0) if self.statuses else 200
        headers = {"Location": "http://elsewhere.example/"} if 300 <= status < 400 else {}
        return httpx.Response(status, headers=headers, text="nope" if status >= 300 else "")


def deliverer(
    recorder: Recorder, sleeps: list[float] | None = None, settings: EventSettings = SETTINGS
) -> Deliverer:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    http = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return Deliverer(http, settings, sleep=sleep, rng=random.Random(7))


async def test_signature_is_hmac_sha256_of_the_exact_body() -> None:
    recorder = Recorder()

    outcome = await deliverer(recorder).deliver(target(), BODY, "e-1")

    assert outcome == Outcome(True, 1)
    [request] = recorder.requests
    expected = "sha256=" + hmac.new(b"topsecret", BODY, hashlib.sha256).hexdigest()
    assert request.content == BODY
    assert request.headers["X-Cairn-Signature"] == expected == signature(BODY, "topsecret")
    assert request.headers["X-RCRT-Signature"] == expected
    assert request.headers["X-Cairn-Event-Id"] == "e-1"
    assert request.headers["X-Cairn-Delivery-Attempt"] == "1"
    assert request.headers["Content-Type"] == "application/json"


async def test_retries_back_off_exponentially_with_jitter() -> None:
    recorder, sleeps = Recorder(500, 502, 503), []

    outcome = await deliverer(recorder, sleeps).deliver(target(), BODY, "e-1")

    assert outcome == Outcome(True, 4)
    assert [r.headers["X-Cairn-Delivery-Attempt"] for r in recorder.requests] == list("1234")
    # 1, 2, 4 s capped at 3 s, each jittered into [half, full]
    for slept, ceiling in zip(sleeps, [1.0, 2.0, 3.0], strict=True):
        assert ceiling / 2 <= slept <= ceiling


async def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    recorder = Recorder(500, 500, 500, 418)

    outcome = await deliverer(recorder, []).deliver(target(), BODY, "e-1")

    assert outcome == Outcome(False, 4, "HTTP 418: nope")


async def test_redirects_are_not_followed() -> None:
    recorder = Recorder(302, 302, 302, 302)

    outcome = await deliverer(recorder, []).deliver(target(), BODY, "e-1")

    assert not outcome.delivered and outcome.last_error == "HTTP 302: nope"
    assert {str(r.url) for r in recorder.requests} == {"https://hooks.example.com/in"}


async def test_a_slow_receiver_times_out() -> None:
    recorder = Recorder(delay_s=5)
    settings = SETTINGS.model_copy(update={"webhook_timeout_s": 0.1, "webhook_max_attempts": 2})

    outcome = await deliverer(recorder, [], settings).deliver(target(), BODY, "e-1")

    assert outcome == Outcome(False, 2, "timed out after 0.1 s")


async def test_dlq_redelivery_continues_the_attempt_count() -> None:
    recorder = Recorder()

    await deliverer(recorder).deliver(target(), BODY, "e-1", previous_attempts=6)

    assert recorder.requests[0].headers["X-Cairn-Delivery-Attempt"] == "7"


async def test_no_secret_no_delivery() -> None:
    recorder = Recorder()

    outcome = await deliverer(recorder).deliver(target(secret=None), BODY, "e-1")

    assert not outcome.delivered and recorder.requests == []


class DeadLetterList:
    def __init__(self) -> None:
        self.entries: list[tuple[Target, str, Outcome]] = []

    async def add(self, hook: Target, event_id: str, event: Any, outcome: Outcome) -> None:
        self.entries.append((hook, event_id, outcome))


async def test_dispatch_matches_selectors_and_dead_letters_failures() -> None:
    wanted = target(url="https://a.example/", selector=Selector(any_tags=["a"]))
    failing = target(url="https://b.example/")
    ignored = target(url="https://c.example/", selector=Selector(any_tags=["z"]))

    async def load(_: uuid.UUID) -> Loaded:
        return Loaded(0, [wanted, failing, ignored])

    recorder = Recorder()

    async def route(request: httpx.Request) -> httpx.Response:
        if request.url.host == "b.example":
            return httpx.Response(500)
        return await recorder(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(route))
    dead = DeadLetterList()
    sink = Deliverer(http, SETTINGS, sleep=lambda _: asyncio.sleep(0))
    dispatcher = EventDispatcher(TargetCache(load, 0, generation_zero), sink, dead)

    assert await dispatcher.dispatch(BODY) == 1
    assert [r.url.host for r in recorder.requests] == ["a.example"]
    assert [(hook.url, event_id) for hook, event_id, _ in dead.entries] == [(failing.url, "e-1")]


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'{"no": "owner"}', b'{"owner_id": 5}'])
async def test_poison_messages_are_skipped(body: bytes) -> None:
    async def load(_: uuid.UUID) -> Loaded:
        raise AssertionError("a poison message must not reach the database")

    http = httpx.AsyncClient(transport=httpx.MockTransport(Recorder()))
    dispatcher = EventDispatcher(
        TargetCache(load, 0, generation_zero), Deliverer(http, SETTINGS), DeadLetterList()
    )

    assert await dispatcher.dispatch(body) == 0


async def generation_zero(_: uuid.UUID) -> int:
    return 0


async def test_an_event_of_a_tenant_without_webhooks_is_not_parsed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The relay's headers name the tenant (Delivery.summary): with no webhook there, the
    body (an assembled context's event is ~60 KB) is never read. With one, it is."""
    loads: list[uuid.UUID] = []

    async def load(owner: uuid.UUID) -> Loaded:
        loads.append(owner)
        return Loaded(0, [target()] if owner == OWNER else [])

    recorder = Recorder()
    http = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    dispatcher = EventDispatcher(
        TargetCache(load, 60, generation_zero), Deliverer(http, SETTINGS), DeadLetterList()
    )
    elsewhere = uuid.uuid4()
    summary = {"owner_id": str(elsewhere), "schema_name": "agent.context.v1"}
    assert await dispatcher.dispatch(b"not an event at all", summary) == 0
    assert loads == [elsewhere]
    assert "not a change event" not in caplog.text  # the body was not parsed

    assert await dispatcher.dispatch(BODY, {"owner_id": str(OWNER), "schema_name": None}) == 1
    assert len(recorder.requests) == 1


async def test_an_event_reads_its_tenants_generation_once() -> None:
    """With the headers' tenant or without, one read of the generation an event."""
    reads: list[uuid.UUID] = []

    async def generation(owner: uuid.UUID) -> int:
        reads.append(owner)
        return 0

    async def load(_: uuid.UUID) -> Loaded:
        return Loaded(0, [target()])

    http = httpx.AsyncClient(transport=httpx.MockTransport(Recorder()))
    dispatcher = EventDispatcher(
        TargetCache(load, 60, generation), Deliverer(http, SETTINGS), DeadLetterList()
    )
    assert await dispatcher.dispatch(BODY, {"owner_id": str(OWNER), "schema_name": None}) == 1
    assert await dispatcher.dispatch(BODY) == 1
    assert reads == [OWNER, OWNER]
