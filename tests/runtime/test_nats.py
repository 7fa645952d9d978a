"""The embedded NATS server with JetStream, driven by nats-py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext

from cairn.runtime import EmbeddedNats, EmbeddedServerError, nats as nats_runtime


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedNats]:
    with EmbeddedNats(tmp_path / "nats") as running:
        yield running


async def publish(url: str, payload: bytes) -> None:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="EVENTS", subjects=["events.>"])
        await js.publish("events.created", payload)
    finally:
        await nc.close()


async def fetch_one(url: str) -> bytes:
    nc = await nats.connect(url)
    try:
        js: JetStreamContext = nc.jetstream()
        sub = await js.pull_subscribe("events.>", durable="reader", stream="EVENTS")
        [msg] = await sub.fetch(1, timeout=2)
        await msg.ack()
        return msg.data
    finally:
        await nc.close()


async def test_jetstream_publish_and_fetch(server: EmbeddedNats) -> None:
    assert server.url == f"nats://127.0.0.1:{server.port}"
    await publish(server.url, b"hello")

    assert await fetch_one(server.url) == b"hello"


async def test_restart_keeps_stream_messages(server: EmbeddedNats) -> None:
    await publish(server.url, b"kept")
    url = server.url

    assert server.restart() == url
    assert await fetch_one(url) == b"kept"


async def test_start_after_kill_keeps_stream_messages(server: EmbeddedNats) -> None:
    await publish(server.url, b"survivor")
    server.kill()
    assert not server.running

    server.start()

    assert await fetch_one(server.url) == b"survivor"


def test_start_and_stop_are_idempotent(server: EmbeddedNats) -> None:
    assert server.start() == server.url
    server.stop()
    server.stop()
    assert not server.running


def test_start_stops_a_server_left_on_the_same_store(tmp_path: Path) -> None:
    orphaned = EmbeddedNats(tmp_path / "nats")  # as if its owner had crashed
    orphaned.start()
    with EmbeddedNats(tmp_path / "nats") as successor:
        assert not orphaned.running
        assert successor.running


def test_start_fails_clearly_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        port = blocker.getsockname()[1]
        server = EmbeddedNats(tmp_path / "nats", port=port)
        with pytest.raises(EmbeddedServerError, match="exited"):
            server.start()
    assert not server.running


def _gone(pid: int) -> bool:
    """Whether ``pid`` exited and was reaped (a stopped or zombie process still counts)."""
    return not Path(f"/proc/{pid}").exists()


def test_a_server_that_ignores_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    server.start()
    pid = int((tmp_path / "nats" / "nats.pid").read_text())
    os.kill(pid, signal.SIGSTOP)  # a stopped process does not act on SIGTERM
    monkeypatch.setattr(nats_runtime, "_STOP_TIMEOUT_S", 0.2)

    server.stop()

    assert _gone(pid)


def test_an_interrupted_stop_still_kills_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    server.start()
    pid = int((tmp_path / "nats" / "nats.pid").read_text())
    os.kill(pid, signal.SIGSTOP)
    waiting = subprocess.Popen.wait

    def interrupted(process: subprocess.Popen[bytes], timeout: float | None = None) -> int:
        if timeout is not None:  # the wait for SIGTERM: a second Ctrl-C arrives
            raise KeyboardInterrupt
        return waiting(process)

    monkeypatch.setattr(subprocess.Popen, "wait", interrupted)

    with pytest.raises(KeyboardInterrupt):
        server.stop()

    assert _gone(pid)
