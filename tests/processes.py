"""`cairn up` as a real process, for tests that need the whole thing; and an app served
over real HTTP inside the test's event loop."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
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


def start_cairn_up(
    data_dir: Path, port: int, model_dir: Path, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
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
            return process
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("no ready line:\n" + "".join(output[-40:]))


def stop(process: subprocess.Popen[str], sig: signal.Signals) -> None:
    process.send_signal(sig)
    try:
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()


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
