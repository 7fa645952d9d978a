"""Keeping ``cairn up``'s embedded PostgreSQL and NATS running.

A thread looks at each service every second; one found stopped (a fast shutdown from
outside, a crash, an OOM kill) is started again on the same port and data, after a delay
that doubles with each restart (0.5 s up to 30 s) and falls back once the service has
stayed up that long. Every restart is logged and counted in
``cairn_embedded_restarts_total{service}``, failed attempts in
``cairn_embedded_restart_failures_total{service}``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType

from prometheus_client import Counter

logger = logging.getLogger(__name__)

RESTARTS = Counter(
    "cairn_embedded_restarts_total", "Embedded services restarted after they stopped", ["service"]
)
RESTART_FAILURES = Counter(
    "cairn_embedded_restart_failures_total", "Failed restarts of embedded services", ["service"]
)


@dataclass(frozen=True)
class RestartPolicy:
    check_interval_s: float = 1.0
    first_delay_s: float = 0.5
    max_delay_s: float = 30.0


@dataclass
class Watched:
    """One service under watch: how to tell it runs and how to start it again."""

    name: str
    is_running: Callable[[], bool]
    start: Callable[[], object]
    delay_s: float = 0.0  # before the next restart attempt
    down_since: float | None = None
    restarted_at: float | None = None
    restarts: int = 0


class Supervisor:
    """Restarts the watched services that stopped, from a thread of its own (a restart
    blocks on ``pg_ctl`` for a while; the event loop keeps serving meanwhile).

    Use as a context manager, entered after the services started and left before they are
    stopped, so that it never restarts a service its owner is stopping.
    """

    def __init__(self, watched: Sequence[Watched], policy: RestartPolicy | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self.watched = list(watched)
        for service in self.watched:
            service.delay_s = self.policy.first_delay_s
            RESTARTS.labels(service.name)  # shown as 0 on /metrics before the first restart
            RESTART_FAILURES.labels(service.name)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="embedded-supervisor", daemon=True)

    def __enter__(self) -> Supervisor:
        if self.watched:
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()  # waits for a restart in progress: its stop must follow it

    def check(self, now: float) -> None:
        """One round: restart every watched service that is down and whose delay is over."""
        for service in self.watched:
            if self._stopping.is_set():
                return
            self._check_one(service, now)

    def _watch(self) -> None:
        while not self._stopping.wait(self.policy.check_interval_s):
            self.check(time.monotonic())

    def _check_one(self, service: Watched, now: float) -> None:
        if service.is_running():
            service.down_since = None
            restarted = service.restarted_at
            if restarted is not None and now - restarted >= self.policy.max_delay_s:
                service.delay_s = self.policy.first_delay_s  # stayed up: the next one is quick
            return
        if service.down_since is None:
            service.down_since = now
            logger.warning("embedded %s stopped; restarting it", service.name)
        if now - service.down_since < service.delay_s:
            return
        self._restart(service, now)

    def _restart(self, service: Watched, now: float) -> None:
        service.delay_s = min(service.delay_s * 2, self.policy.max_delay_s)
        try:
            service.start()
        except Exception as error:
            RESTART_FAILURES.labels(service.name).inc()
            service.down_since = now  # the next attempt waits the doubled delay
            logger.error(
                "embedded %s did not restart (%s); next attempt in %.1f s",
                service.name,
                error,
                service.delay_s,
            )
            return
        service.restarts += 1
        service.down_since, service.restarted_at = None, now
        RESTARTS.labels(service.name).inc()
        logger.warning("embedded %s restarted (restart %d)", service.name, service.restarts)
