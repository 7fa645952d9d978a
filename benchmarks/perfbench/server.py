"""`cairn serve` and `cairn worker` as real processes on the benchmark's database and NATS."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def environment(
    database_url: str, nats_url: str, data_dir: Path, *, admin_url: str | None = None
) -> dict[str, str]:
    """``database_url`` serves (the application role, under row-level security, as ``cairn
    up``), ``admin_url`` migrates and runs the cross-tenant jobs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    if admin_url is not None:
        env["CAIRN_ADMIN_DATABASE_URL"] = admin_url
    env |= {
        "DATABASE_URL": database_url,
        "NATS_URL": nats_url,
        "CAIRN_DATA_DIR": str(data_dir),
        "CAIRN_EMBEDDING__MODEL_DIR": str(REPO / ".cairn" / "models"),
        "CAIRN_LOG_LEVEL": "WARNING",
        # 200 SSE subscribers from one caller: above the default per-caller cap of 16.
        "CAIRN_LIMITS__MAX_SSE_PER_CALLER": "0",
    }
    return env


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(REPO / ".venv/bin/cairn"), *command], env=env, stdout=out, stderr=out
        )


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"cairn serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"cairn serve not ready after {timeout} s:\n{log.read_text()[-3000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (0 when gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0
