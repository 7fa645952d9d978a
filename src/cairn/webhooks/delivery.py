"""Signed HTTP delivery of one event to one webhook, with timeouts and jittered exponential
retries. No database and no NATS here: the caller decides what a final failure means."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from prometheus_client import Counter

from cairn.config import EventSettings
from cairn.events.selectors import Selector

ATTEMPTS = Counter("cairn_webhook_attempts_total", "Webhook HTTP attempts by result", ["result"])
USER_AGENT = "cairn-webhooks/0.1"
_ERROR_BODY_BYTES = 256

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Target:
    """A webhook as the delivery loop needs it: where, for whom, and how to sign."""

    webhook_id: uuid.UUID
    owner_id: uuid.UUID
    agent_id: str
    url: str
    secret: str | None
    selector: Selector | None = None

    def wants(self, event: Mapping[str, Any]) -> bool:
        return self.selector is None or self.selector.matches(event)


@dataclass(frozen=True, slots=True)
class Outcome:
    delivered: bool
    attempts: int
    last_error: str | None = None


def signature(body: bytes, secret: str) -> str:
    """``sha256=<hex HMAC-SHA256 of the exact body>``, as RCRT receivers verify it."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Deliverer:
    def __init__(
        self,
        http: httpx.AsyncClient,
        settings: EventSettings,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.http = http
        self.settings = settings
        self.sleep = sleep
        self.rng = rng or random.Random()
        # Bounds requests in flight; backoff waits do not hold a slot.
        self.slots = asyncio.Semaphore(max(1, settings.webhook_concurrency))

    async def deliver(
        self, target: Target, body: bytes, event_id: str, *, previous_attempts: int = 0
    ) -> Outcome:
        """Up to ``webhook_max_attempts`` tries; success is any 2xx answer."""
        if target.secret is None:
            return Outcome(False, 0, f"agent {target.agent_id} has no signing secret")
        attempts = max(1, self.settings.webhook_max_attempts)
        error = ""
        for attempt in range(1, attempts + 1):
            failure = await self._attempt(target, body, event_id, previous_attempts + attempt)
            ATTEMPTS.labels("failure" if failure else "success").inc()
            if failure is None:
                return Outcome(True, attempt)
            error = failure
            if attempt < attempts:
                await self.sleep(self.backoff(attempt))
        return Outcome(False, attempts, error)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (1-based): exponential, capped, with
        "equal jitter" so that receivers coming back are not hit by every retry at once."""
        base = self.settings.webhook_backoff_s * 2 ** (attempt - 1)
        capped = min(base, self.settings.webhook_max_backoff_s)
        return float(capped / 2 + self.rng.uniform(0, capped / 2))

    async def _attempt(self, target: Target, body: bytes, event_id: str, number: int) -> str | None:
        """None on success, else what went wrong (kept as the DLQ entry's last error)."""
        assert target.secret is not None
        signed = signature(body, target.secret)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Cairn-Signature": signed,
            "X-RCRT-Signature": signed,
            "X-Cairn-Event-Id": event_id,
            "X-Cairn-Webhook-Id": str(target.webhook_id),
            "X-Cairn-Delivery-Attempt": str(number),
        }
        timeout_s = self.settings.webhook_timeout_s
        try:
            async with self.slots, asyncio.timeout(timeout_s):
                return await self._post(target.url, body, headers, timeout_s)
        except TimeoutError:
            return f"timed out after {timeout_s:g} s"
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as error:
            return f"{type(error).__name__}: {error}"[:500]

    async def _post(
        self, url: str, body: bytes, headers: dict[str, str], timeout_s: float
    ) -> str | None:
        request = self.http.build_request(
            "POST", url, content=body, headers=headers, timeout=timeout_s
        )
        response = await self.http.send(request, stream=True, follow_redirects=False)
        try:
            if response.is_success:
                return None
            snippet = await _prefix(response, _ERROR_BODY_BYTES)
            return f"HTTP {response.status_code}" + (f": {snippet}" if snippet else "")
        finally:
            await response.aclose()


async def _prefix(response: httpx.Response, limit: int) -> str:
    """At most ``limit`` bytes of the body: a receiver's error page may be huge."""
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= limit:
            break
    return data[:limit].decode("utf-8", "replace").strip()
