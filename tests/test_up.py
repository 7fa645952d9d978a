"""`cairn up` as an operator runs it: a real process, its ready line, Ctrl-C, a restart
that reuses the same data directory, and its embedded services stopped from outside."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from tests.factories import breadcrumb
from tests.processes import start_cairn_up as _start, stop as _stop

from cairn.runtime import free_port


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cairn-up-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _embedded_ports(data_dir: Path) -> list[int]:
    """Ports the embedded PostgreSQL and NATS listened on, from their own files."""
    ports = []
    pid_file = data_dir / "postgres" / "postmaster.pid"
    if pid_file.exists():
        ports.append(int(pid_file.read_text().splitlines()[3]))
    return ports


@pytest.mark.slow
def test_up_serves_stops_cleanly_and_restarts_on_the_same_data(
    data_dir: Path, model_dir: Path
) -> None:
    port = free_port()
    process = _start(data_dir, port, model_dir)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            assert http.get("/health").status_code == 200
            knowledge = http.get("/breadcrumbs", params={"schema_name": "knowledge.v1"}).json()
            assert knowledge, "the default bootstrap breadcrumbs were not loaded"
            created = http.post(
                "/breadcrumbs",
                json={"schema_name": "note.v1", "title": "kept", "tags": [], "context": {"a": 1}},
            )
            assert created.status_code == 201
        pg_ports = _embedded_ports(data_dir)
    finally:
        _stop(process, signal.SIGINT)
    assert not _listening(port)
    assert pg_ports and not any(_listening(p) for p in pg_ports)

    process = _start(data_dir, port, model_dir)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            assert http.get(f"/breadcrumbs/{created.json()['id']}").status_code == 200
            again = http.get("/breadcrumbs", params={"schema_name": "knowledge.v1"}).json()
            assert len(again) == len(knowledge), "a second bootstrap created duplicates"
    finally:
        _stop(process, signal.SIGTERM)
    assert not _listening(port)


def _processes_of(data_dir: Path) -> list[int]:
    """Live processes running on ``data_dir``: postgres (its cwd) and nats-server (its
    store on the command line). Zombies have neither and do not count."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cwd.startswith(str(data_dir)) or os.fsencode(data_dir) in cmdline:
            found.append(int(entry.name))
    return found


def _restarts(http: httpx.Client, service: str) -> float:
    wanted = f'cairn_embedded_restarts_total{{service="{service}"}} '
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(wanted):
            return float(line.removeprefix(wanted))
    raise AssertionError(f"no {wanted.strip()} on /metrics")


def _until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "did not recover in time"
        time.sleep(0.2)


def _serves(http: httpx.Client) -> bool:
    return http.post("/breadcrumbs", json=breadcrumb()).status_code == 201


def _nats_ready(http: httpx.Client) -> bool:
    return http.get("/ready").json()["checks"]["nats"] == "ok"


@pytest.mark.slow
def test_up_restarts_what_stopped_and_leaves_nothing_behind(
    data_dir: Path, model_dir: Path
) -> None:
    port = free_port()
    process = _start(data_dir, port, model_dir)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            assert _restarts(http, "postgres") == 0 and _restarts(http, "nats") == 0
            postmaster = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
            os.kill(postmaster, signal.SIGINT)  # what `pg_ctl stop -m fast` sends
            _until(lambda: http.get("/ready").status_code == 503)
            _until(lambda: _serves(http))
            # Counted once start() returned: a request may be served a moment before.
            _until(lambda: _restarts(http, "postgres") == 1)

            nats_server = int((data_dir / "nats" / "nats.pid").read_text())
            os.kill(nats_server, signal.SIGKILL)
            _until(lambda: _restarts(http, "nats") == 1)
            _until(lambda: _nats_ready(http))
            assert _serves(http)
        assert _processes_of(data_dir)
    finally:
        _stop(process, signal.SIGINT)
    assert _processes_of(data_dir) == []
