"""`cairn up` as a real process, for tests that need the whole thing; and an app served
over real HTTP inside the test's event loop."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from cairn.api.server import server_config
from cairn.config import Limits
from cairn.runtime import free_port

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 120
# The last lines each started `cairn up` wrote, by pid: shown when it does not stop.
_TAILS: dict[int, deque[str]] = {}


def start_cairn_up(
    data_dir: Path,
    port: int,
    model_dir: Path,
    extra_env: dict[str, str] | None = None,
    *,
    drain: bool = True,
) -> subprocess.Popen[str]:
    """`cairn up` once it has printed its ready line. With ``drain`` its output is read
    from then on by a thread of ours (pass False to read it yourself): nothing else reads
    the pipe, and once it holds 64 KiB the server blocks on its next log line, so it no
    longer serves or stops (its log under load, or its drain at shutdown, can fill it)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "NATS_URL"}}
    env["CAIRN_EMBEDDING__MODEL_DIR"] = str(model_dir)
    env.update(extra_env or {})
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
            if drain:
                tail = _TAILS[process.pid] = deque(output, maxlen=200)
                threading.Thread(target=_read, args=(process, tail), daemon=True).start()
            return process
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("no ready line:\n" + "".join(output[-40:]))


def _read(process: subprocess.Popen[str], tail: deque[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        tail.append(line)


def stop(process: subprocess.Popen[str], sig: signal.Signals) -> None:
    process.send_signal(sig)
    try:
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        tail = "".join(_TAILS.get(process.pid, ()))
        assert code == 0, f"cairn up ended with {code} after {sig.name}; its last lines:\n{tail}"
    finally:
        if process.poll() is None:
            process.kill()
        _TAILS.pop(process.pid, None)


@asynccontextmanager
async def served(app: FastAPI, limits: Limits | None = None) -> AsyncIterator[str]:
    """``app`` over real HTTP (for SSE) on a free port, sharing its lifespan and resources,
    behind the server's edge (``limits``: the app's own unless given)."""
    port = free_port()
    if limits is None:  # the app's own; a bare test app without resources gets defaults
        resources = getattr(app.state, "resources", None)
        limits = resources.settings.limits if resources is not None else Limits()
    config = server_config(app, limits, host="127.0.0.1", port=port, lifespan="off")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
