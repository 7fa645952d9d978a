"""The supervisor of ``cairn up``'s embedded services: its restart policy on an in-memory
service with a clock of our own, then real PostgreSQL and NATS stopped from outside."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import pytest

from cairn.runtime import EmbeddedNats, EmbeddedPostgres
from cairn.runtime.supervisor import RESTARTS, RestartPolicy, Supervisor, Watched

POLICY = RestartPolicy(check_interval_s=0.05, first_delay_s=0.5, max_delay_s=4.0)


class FakeService:
    """Stops when told; its next ``failures`` starts raise."""

    def __init__(self) -> None:
        self.up = True
        self.starts = 0
        self.failures = 0

    def start(self) -> str:
        self.starts += 1
        if self.failures:
            self.failures -= 1
            raise OSError("port taken")
        self.up = True
        return "url"

    def watched(self, name: str = "fake") -> Watched:
        return Watched(name, lambda: self.up, self.start)


def restarts(name: str) -> float:
    value = RESTARTS.labels(name)._value.get()  # prometheus_client has no public getter
    return float(value)


def test_a_running_service_is_left_alone() -> None:
    service = FakeService()
    supervisor = Supervisor([service.watched()], POLICY)
    for now in range(10):
        supervisor.check(float(now))
    assert service.starts == 0


def test_a_stopped_service_restarts_after_the_first_delay_and_is_counted() -> None:
    service = FakeService()
    before = restarts("counted")
    supervisor = Supervisor([service.watched("counted")], POLICY)
    service.up = False
    supervisor.check(100.0)
    supervisor.check(100.4)
    assert service.starts == 0
    supervisor.check(100.5)
    assert service.starts == 1 and service.up
    assert restarts("counted") == before + 1


def test_failed_restarts_back_off_exponentially_up_to_the_cap() -> None:
    service = FakeService()
    service.failures = 5
    supervisor = Supervisor([service.watched()], POLICY)
    service.up = False
    attempts = []
    now = 0.0
    while service.starts < 6:
        before = service.starts
        supervisor.check(now)
        if service.starts > before:
            attempts.append(now)
        now = round(now + 0.25, 2)
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert attempts[0] == 0.5
    assert gaps == [1.0, 2.0, 4.0, 4.0, 4.0]  # doubled each time, capped at max_delay_s
    assert service.up


def test_the_delay_falls_back_once_the_service_stayed_up() -> None:
    service = FakeService()
    watched = service.watched()
    supervisor = Supervisor([watched], POLICY)
    for stopped_at in (0.0, 10.0):  # a second stop well after the first restart
        service.up = False
        supervisor.check(stopped_at)
        supervisor.check(stopped_at + 0.5)
        assert service.up
        supervisor.check(stopped_at + 5.0)  # up for longer than max_delay_s
    assert service.starts == 2 and watched.delay_s == POLICY.first_delay_s


def test_nothing_restarts_after_the_supervisor_is_left() -> None:
    service = FakeService()
    with Supervisor([service.watched()], POLICY):
        pass
    service.up = False
    time.sleep(0.7)
    assert service.starts == 0


def _wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cairn-test-supervised-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_killed_nats_server_comes_back_on_its_port(scratch: Path) -> None:
    nats = EmbeddedNats(scratch / "nats")
    url = nats.start()
    try:
        with Supervisor([Watched("nats-test", lambda: nats.running, nats.start)], POLICY):
            pid = int((scratch / "nats" / "nats.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            _wait_for(
                lambda: nats.running and int((scratch / "nats" / "nats.pid").read_text()) != pid
            )
        assert nats.url == url
    finally:
        nats.stop()


async def test_a_postgres_stopped_from_outside_comes_back_on_its_port(scratch: Path) -> None:
    postgres = EmbeddedPostgres(scratch / "postgres", fast=True)
    postgres.start()
    dsn = postgres.dsn
    try:
        with Supervisor(
            [Watched("postgres-test", lambda: postgres.running, postgres.start)], POLICY
        ):
            postgres.stop()  # what `pg_ctl stop -m fast` does
            _wait_for(lambda: postgres.running)
        connection = await asyncpg.connect(dsn)
        assert await connection.fetchval("SELECT 1") == 1
        await connection.close()
    finally:
        postgres.stop()
