"""`cairn up` with CAIRN_AUTH=jwt and no key: it generates one in its data directory (0600),
loads the bootstrap records with a token of its own, and a restart reuses the key, so
tokens minted before it still work."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest
from tests.processes import REPO, start_cairn_up, stop

from cairn.runtime import free_port


def _token(data_dir: Path) -> str:
    return subprocess.run(
        [str(REPO / ".venv/bin/cairn"), "token", "--data-dir", str(data_dir),
         "--agent-id", "ops", "--roles", "curator"],
        capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "CAIRN_AUTH": "jwt"},
    ).stdout.strip()  # fmt: skip


@pytest.mark.slow
def test_up_generates_a_key_once_and_keeps_it_across_restarts(model_dir: Path) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="cairn-up-jwt-"))
    port = free_port()
    try:
        process = start_cairn_up(data_dir, port, model_dir, {"CAIRN_AUTH": "jwt"})
        try:
            key = data_dir / "auth" / "jwt-hs256.secret"
            assert stat.S_IMODE(key.stat().st_mode) == 0o600
            token = _token(data_dir)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
                assert http.get("/breadcrumbs").status_code == 401
                auth = {"Authorization": f"Bearer {token}"}
                listed = http.get(
                    "/breadcrumbs", params={"schema_name": "knowledge.v1"}, headers=auth
                )
                assert listed.status_code == 200 and listed.json(), "bootstrap did not load"
        finally:
            stop(process, signal.SIGINT)
        first_key = key.read_bytes()
        process = start_cairn_up(data_dir, port, model_dir, {"CAIRN_AUTH": "jwt"})
        try:
            assert key.read_bytes() == first_key
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
                assert http.get("/agents", headers=auth).status_code == 200
        finally:
            stop(process, signal.SIGINT)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
