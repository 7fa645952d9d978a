"""Property-based fuzzing of the whole OpenAPI surface (schemathesis): no input may 5xx."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.processes import REPO, start_cairn_up, stop

from cairn.runtime import free_port


@pytest.mark.slow
def test_no_generated_request_gets_a_server_error(model_dir: Path) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="cairn-fuzz-"))
    port = free_port()
    process = start_cairn_up(data_dir, port, model_dir)
    try:
        result = _fuzz(port, max_examples=40)
    finally:
        stop(process, signal.SIGINT)
        shutil.rmtree(data_dir, ignore_errors=True)
    assert result.returncode == 0, result.stdout[-6000:]
    assert "generated" in result.stdout and "passed" in result.stdout


def _fuzz(port: int, *, max_examples: int, extra: tuple[str, ...] = ()) -> Any:
    """schemathesis against the served OpenAPI schema, seed 7, server errors only: valid and
    invalid values (NUL included) for every declared body, path, query and header parameter.
    tests/test_fuzz_query_headers.py adds undeclared and non-UTF-8 ones, and the stream.

    The server builds its schema on the first request for it, which on a loaded machine can
    outlast schemathesis' 10 s read timeout for the schema: it is built here first."""
    httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=120).raise_for_status()
    return subprocess.run(
        [
            str(REPO / ".venv/bin/st"), "run", f"http://127.0.0.1:{port}/openapi.json",
            "--checks", "not_a_server_error", "--max-examples", str(max_examples),
            "--seed", "7", "--no-color", "--mode", "all", "--generation-allow-x00", "true",
            *extra,
            # A valid SSE request streams until the client leaves; tests/stream covers it.
            "--exclude-path", "/events/stream",
        ],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_no_generated_request_with_a_curator_token_gets_a_server_error(model_dir: Path) -> None:
    """The same with CAIRN_AUTH=jwt (the key `cairn up` generates) and a curator's token, so
    the generated requests get past authentication and reach every route's logic."""
    data_dir = Path(tempfile.mkdtemp(prefix="cairn-fuzz-jwt-"))
    port = free_port()
    process = start_cairn_up(data_dir, port, model_dir, {"CAIRN_AUTH": "jwt"})
    try:
        token = subprocess.run(
            [str(REPO / ".venv/bin/cairn"), "token", "--data-dir", str(data_dir),
             "--agent-id", "fuzz", "--roles", "curator"],
            capture_output=True, text=True, timeout=60, check=True,
            env={**os.environ, "CAIRN_AUTH": "jwt"},
        ).stdout.strip()  # fmt: skip
        headers = {"Authorization": f"Bearer {token}"}
        probe = httpx.get(f"http://127.0.0.1:{port}/agents", headers=headers, timeout=10)
        assert probe.status_code == 200, probe.text  # the fuzzing gets past authentication
        result = _fuzz(port, max_examples=15, extra=("--header", f"Authorization: Bearer {token}"))
    finally:
        stop(process, signal.SIGINT)
        shutil.rmtree(data_dir, ignore_errors=True)
    assert result.returncode == 0, result.stdout[-6000:]
    assert "generated" in result.stdout and "passed" in result.stdout
