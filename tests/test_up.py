"""`cairn up` as an operator runs it: a real process, its ready line, Ctrl-C, and a restart
that reuses the same data directory."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cairn.runtime import free_port

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 120


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cairn-up-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _start(data_dir: Path, port: int, model_dir: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "NATS_URL"}}
    env["CAIRN_EMBEDDING__MODEL_DIR"] = str(model_dir)
    command = [
        str(REPO / ".venv/bin/cairn"),
        "up",
        "--data-dir",
        str(data_dir),
        "--port",
        str(port),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    deadline = time.monotonic() + READY_TIMEOUT_S
    output: list[str] = []
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        output.append(line)
        if line.strip() == f"Cairn ready: http://127.0.0.1:{port}":
            return process
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("no ready line:\n" + "".join(output[-40:]))


def _stop(process: subprocess.Popen[str], sig: signal.Signals) -> None:
    process.send_signal(sig)
    try:
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()


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
