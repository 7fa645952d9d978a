"""Which webhooks an event goes to: the target cache, its generation check, and a webhook
registered while the cache is warm (with the default 2 s cache, not the tests' 0 s)."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from fastapi import FastAPI

from cairn.config import EventSettings, Settings
from cairn.webhooks.delivery import Deliverer, Target
from cairn.webhooks.dispatch import EventDispatcher
from cairn.webhooks.targets import (
    GenerationReads,
    Loaded,
    TargetCache,
    database_generation,
    database_loader,
)

OWNER = uuid.uuid4()


def hook(url: str = "https://hooks.example.com/in") -> Target:
    return Target(
        webhook_id=uuid.uuid4(), owner_id=OWNER, agent_id="a", url=url, secret="topsecret"
    )


class Store:
    """The tenant's webhooks and generation, as the database would hold them."""

    def __init__(self) -> None:
        self.generation = 0
        self.targets: list[Target] = []
        self.loads = 0
        self.reads = 0

    async def load(self, _: uuid.UUID) -> Loaded:
        self.loads += 1
        return Loaded(self.generation, list(self.targets))

    async def read(self, _: uuid.UUID) -> int:
        """Sees what was committed when it began, answers a moment later."""
        self.reads += 1
        seen = self.generation
        await asyncio.sleep(0)
        return seen

    def register(self, target: Target) -> None:
        self.targets.append(target)
        self.generation += 1


async def test_cache_reuses_targets_until_the_ttl_passes() -> None:
    store, now = Store(), [100.0]
    cache = TargetCache(store.load, 2.0, store.read, clock=lambda: now[0])
    await cache.for_owner(OWNER)
    now[0] += 1.9
    await cache.for_owner(OWNER)
    assert store.loads == 1
    now[0] += 0.2
    await cache.for_owner(OWNER)
    assert store.loads == 2


class SlowStore(Store):
    """Loads that take a moment, so that callers arrive while one runs."""

    async def load(self, owner: uuid.UUID) -> Loaded:
        loaded = await super().load(owner)
        for _ in range(3):
            await asyncio.sleep(0)
        return loaded


async def test_callers_missing_at_once_share_one_load() -> None:
    store = SlowStore()
    cache = TargetCache(store.load, 2.0, store.read)
    store.register(added := hook())
    found = await asyncio.gather(*(cache.for_owner(OWNER) for _ in range(20)))
    assert found == [[added]] * 20
    assert store.loads == 1


class GatedStore(Store):
    """Loads that read the targets at once and answer when released."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = asyncio.Event(), asyncio.Event()

    async def load(self, owner: uuid.UUID) -> Loaded:
        loaded = await super().load(owner)
        self.entered.set()
        await self.release.wait()
        return loaded


async def test_a_load_begun_before_a_registration_is_not_shared_with_later_callers() -> None:
    store = GatedStore()
    cache = TargetCache(store.load, 2.0, store.read)
    early = asyncio.create_task(cache.for_owner(OWNER))
    await store.entered.wait()  # the early caller's load has read the targets
    store.register(added := hook())
    late = asyncio.create_task(cache.for_owner(OWNER))
    for _ in range(5):  # the late caller reads the new generation and finds the load running
        await asyncio.sleep(0)
    store.release.set()
    assert await early == []
    assert await late == [added]
    assert store.loads == 2


async def test_a_failed_load_fails_its_callers_and_the_next_one_loads_again() -> None:
    store = SlowStore()
    failing = [True]

    async def load(owner: uuid.UUID) -> Loaded:
        if failing[0]:
            await asyncio.sleep(0)
            raise ConnectionError("database away")
        return await store.load(owner)

    cache = TargetCache(load, 2.0, store.read)
    results = await asyncio.gather(
        *(cache.for_owner(OWNER) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, ConnectionError) for r in results)
    failing[0] = False
    store.register(added := hook())
    assert await cache.for_owner(OWNER) == [added]


async def test_a_registration_reaches_the_next_event_within_the_ttl() -> None:
    store = Store()
    cache = TargetCache(store.load, 3600.0, store.read)
    assert await cache.for_owner(OWNER) == []

    store.register(added := hook())

    assert await cache.for_owner(OWNER) == [added]


async def test_callers_share_a_read_but_never_one_begun_before_they_asked() -> None:
    store = Store()
    reads = GenerationReads(store.read)
    first = asyncio.create_task(reads.current(OWNER))
    while store.reads == 0:  # until the first read is under way
        await asyncio.sleep(0)
    store.generation = 7  # committed after it began: later callers must see it
    later = [asyncio.create_task(reads.current(OWNER)) for _ in range(5)]

    results = await asyncio.gather(first, *later)

    assert results == [0, 7, 7, 7, 7, 7]
    assert store.reads == 2


@pytest.mark.parametrize("reader", ["tenant", "system"])
async def test_registering_while_the_cache_is_warm_delivers_the_next_event(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, marker: str, reader: str
) -> None:
    """Either way of reading the generation: the tenant's scoped transaction, or the
    schema owner's single statement the API uses."""
    received: list[httpx.Request] = []

    async def receive(request: httpx.Request) -> httpx.Response:
        received.append(request)
        return httpx.Response(204)

    sessions = app.state.resources.session_factory
    system = app.state.resources.system_sessions if reader == "system" else None
    events = EventSettings()  # the default cache time to live
    assert events.webhook_cache_ttl_s >= 2.0
    cache = TargetCache(
        database_loader(sessions),
        events.webhook_cache_ttl_s,
        database_generation(sessions, system),
    )
    http = httpx.AsyncClient(transport=httpx.MockTransport(receive))
    dispatcher = EventDispatcher(cache, Deliverer(http, events), dead=_NoDeadLetters())
    body = json.dumps(
        {"owner_id": settings.default_tenant_id, "event_id": str(uuid.uuid4()), "tags": [marker]}
    ).encode()
    assert await dispatcher.dispatch(body) == 0  # the cache now holds the tenant's targets

    registered = await client.post(
        "/agents/fresh-agent/webhooks",
        json={"url": "https://fresh.example/in", "selector": {"any_tags": [marker]}},
    )
    assert registered.status_code == 201, registered.text

    assert await dispatcher.dispatch(body) == 1
    assert [str(request.url) for request in received] == ["https://fresh.example/in"]


class _NoDeadLetters:
    async def add(self, *_: object) -> None:
        raise AssertionError("nothing should be dead-lettered")
