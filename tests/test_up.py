"""`cairn up` as an operator runs it: a real process, its ready line, Ctrl-C, and a restart
that reuses the same data directory."""

from __future__ import annotations

import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.processes import start_cairn_up as _start
from tests.processes import stop as _stop

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
