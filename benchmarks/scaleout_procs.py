"""The scale-out benchmark's processes: the `cairn worker`s it starts (their peak RSS, their
database connections) and the CPU each part of the system spends (benchmarks/scaleout.py)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path

import psutil
from perfbench import server

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cairn-bench"


class Workers:
    """N `cairn worker` processes, their peak RSS sampled while they run."""

    def __init__(self, count: int, env: dict[str, str], profile: Path | None = None) -> None:
        self.processes = [_worker(i, env, profile) for i in range(count)]
        self.peak_rss = [0.0] * count
        self._sampling: asyncio.Task[None] | None = None

    def start_sampling(self) -> None:
        self.peak_rss = [0.0] * len(self.processes)
        self._sampling = asyncio.create_task(self._sample())

    async def stop_sampling(self) -> list[float]:
        if self._sampling is not None:
            self._sampling.cancel()
            await asyncio.gather(self._sampling, return_exceptions=True)
        self._sample_once()
        return list(self.peak_rss)

    def _sample_once(self) -> None:
        for i, process in enumerate(self.processes):
            if process.poll() is not None:
                raise RuntimeError(f"worker {i} exited with {process.returncode}")
            self.peak_rss[i] = max(self.peak_rss[i], server.rss_mb(process.pid))

    async def _sample(self) -> None:
        while True:
            self._sample_once()
            await asyncio.sleep(0.5)

    def ports(self) -> dict[int, int]:
        """Local TCP port → worker index, for every connection the workers hold now."""
        out = {}
        for i, process in enumerate(self.processes):
            for connection in psutil.Process(process.pid).net_connections(kind="tcp"):
                out[connection.laddr.port] = i
        return out

    def stop(self) -> None:
        for process in self.processes:
            server.stop(process)


class CpuMeter:
    """CPU seconds (user + system) spent by each part of the system, children included:
    what one assembly costs in CPU does not depend on how busy the machine is."""

    def __init__(self, parts: dict[str, list[int]]) -> None:
        self.parts = parts

    def read(self) -> dict[str, float]:
        return {name: sum(_tree_cpu(pid) for pid in pids) for name, pids in self.parts.items()}


def _tree_cpu(pid: int) -> float:
    try:
        process = psutil.Process(pid)
        total = 0.0
        for each in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                times = each.cpu_times()
                total += times.user + times.system
        return total
    except psutil.Error:
        return 0.0


def service_pids(root: Path) -> dict[str, list[int]]:
    """PostgreSQL's postmaster and the NATS server of the run under ``root``."""
    found: dict[str, list[int]] = {"postgres": [], "nats": []}
    for process in psutil.process_iter(["pid", "cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        if str(root) not in command:
            continue
        if "nats-server" in command:
            found["nats"].append(process.info["pid"])
        elif "postgres" in command and "-D" in command:
            found["postgres"].append(process.info["pid"])
    return found


def _worker(i: int, env: dict[str, str], profile: Path | None) -> subprocess.Popen[bytes]:
    """`cairn worker`; with ``profile``, under cProfile (written when it stops)."""
    log = CACHE / f"scaleout-worker-{i}.log"
    if profile is None:
        return server.start(["worker"], env, log)
    profile.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "cProfile", "-o", str(profile / f"worker-{i}.prof")]
    with log.open("wb") as out:
        return subprocess.Popen(
            [*command, str(REPO / ".venv/bin/cairn"), "worker"], env=env, stdout=out, stderr=out
        )
