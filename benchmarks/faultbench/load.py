"""Traffic for the scenarios: trigger records posted at a steady rate, and a tally of every
answer the service gave (status codes, connection errors)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

TRIGGER_SCHEMA = "fault.trigger.v1"
TRIGGER_TAG = "fault:trigger"
REQUEST_TIMEOUT_S = 15.0


@dataclass
class Tally:
    """Every request a scenario made and how it was answered."""

    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def operations(self) -> int:
        return sum(self.statuses.values()) + sum(self.errors.values())

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    def unexpected_5xx(self, allow_503: bool) -> int:
        """5xx answers a correct service would not give; 503 is expected only while a
        dependency is down, and only when the scenario takes one down."""
        return self.server_errors - (self.statuses[503] if allow_503 else 0)

    def error(self, error: Exception) -> None:
        self.errors[type(error).__name__] += 1

    async def request(
        self, http: httpx.AsyncClient, method: str, url: str, **kwargs: Any
    ) -> httpx.Response | None:
        """The response, or None when the connection failed (counted by error type)."""
        try:
            response = await http.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            self.error(error)
            return None
        self.statuses[response.status_code] += 1
        return response

    def summary(self) -> dict[str, Any]:
        return {
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "connection_errors": dict(self.errors),
        }


@dataclass
class Trigger:
    """One trigger record; ``id`` is set once the service acknowledged it (201)."""

    number: int
    session_tag: str
    id: uuid.UUID | None = None
    acknowledged_at: float | None = None


def trigger_body(number: int, session_tag: str, tags: list[str]) -> dict[str, Any]:
    return {
        "schema_name": TRIGGER_SCHEMA,
        "title": f"Fault trigger {number}",
        "tags": [*tags, session_tag],
        "context": {"n": number, "text": f"deploy step {number} of the fault suite"},
    }


@dataclass
class TriggerLoad:
    """Posts trigger records at ``rate`` per second until stopped or ``limit`` is reached.
    ``in_flight`` 1 posts strictly one after another (for checks of event order)."""

    http: httpx.AsyncClient
    tally: Tally
    prefix: str
    tags: list[str]
    rate: float
    limit: int = 100_000
    in_flight: int = 16
    triggers: list[Trigger] = field(default_factory=list)

    @property
    def acknowledged(self) -> list[Trigger]:
        return [t for t in self.triggers if t.id is not None]

    async def post(self, trigger: Trigger) -> None:
        body = trigger_body(trigger.number, trigger.session_tag, self.tags)
        response = await self.tally.request(
            self.http, "POST", "/breadcrumbs", json=body, timeout=REQUEST_TIMEOUT_S
        )
        if response is not None and response.status_code == 201:
            trigger.id = uuid.UUID(response.json()["id"])
            trigger.acknowledged_at = time.monotonic()

    async def run(self, stop: asyncio.Event) -> None:
        slots = asyncio.Semaphore(self.in_flight)
        tasks: set[asyncio.Task[None]] = set()

        async def one(trigger: Trigger) -> None:
            try:
                await self.post(trigger)
            finally:
                slots.release()

        started = time.monotonic()
        while not stop.is_set() and len(self.triggers) < self.limit:
            await slots.acquire()
            trigger = Trigger(len(self.triggers), f"session:{self.prefix}-{len(self.triggers)}")
            self.triggers.append(trigger)
            task = asyncio.create_task(one(trigger))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            next_at = started + len(self.triggers) / self.rate
            with_stop = asyncio.create_task(stop.wait())
            await asyncio.wait({with_stop}, timeout=max(0.0, next_at - time.monotonic()))
            with_stop.cancel()
        await asyncio.gather(*tasks)


async def run_for(load: TriggerLoad, seconds: float) -> None:
    """Run ``load`` for ``seconds`` (then wait for the posts in flight)."""
    stop = asyncio.Event()
    task = asyncio.create_task(load.run(stop))
    await asyncio.sleep(seconds)
    stop.set()
    await task
