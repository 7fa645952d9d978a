"""The topology under test, as real processes on loopback: an embedded PostgreSQL and NATS
run by the harness itself (so it can stop, kill and restart them), one ``cairn serve`` and
two ``cairn worker`` processes.

Every spawned process imports Cairn from this checkout (``PYTHONPATH=<repo>/src``), so the
suite measures the code it lives beside, not whatever the virtualenv was installed from.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.runtime import EmbeddedNats, EmbeddedPostgres, free_port

REPO = Path(__file__).resolve().parents[2]
CAIRN = [str(REPO / ".venv/bin/python"), "-m", "cairn.cli"]
READY_TIMEOUT_S = 120.0
WORKER_READY_LINE = "consuming BREADCRUMBS as cairn-worker"  # the consumer runner, bound


@dataclass
class Process:
    """One spawned ``cairn`` command and the log file of its current incarnation."""

    name: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    popen: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    starts: int = 0

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


@dataclass
class Topology:
    root: Path
    model_dir: Path
    workers: int = 2
    postgres: EmbeddedPostgres = field(init=False)
    nats: EmbeddedNats = field(init=False)
    port: int = field(init=False)
    serve: Process = field(init=False)
    worker_processes: list[Process] = field(init=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        # Fixed ports, so that a restarted server is found at the same address.
        self.postgres = EmbeddedPostgres(self.root / "pg", port=free_port(), fast=True)
        self.nats = EmbeddedNats(self.root / "nats", port=free_port())
        self.port = free_port()
        self.serve = Process("serve", ["serve", "--port", str(self.port)])
        # Workers log each assembly (DEBUG): the late-agent scenario reads who assembled what.
        self.worker_processes = [
            Process(f"worker-{i}", ["worker"], {"CAIRN_LOG_LEVEL": "DEBUG"})
            for i in range(self.workers)
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
        env.pop("DATABASE_URL", None)
        env.pop("NATS_URL", None)
        source = str(REPO / "src")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
        return env | {
            "DATABASE_URL": self.postgres.url_for(DEFAULT_APP_ROLE),
            "CAIRN_ADMIN_DATABASE_URL": self.postgres.url,
            "NATS_URL": self.nats.url,
            "CAIRN_DATA_DIR": str(self.root / "data"),
            "CAIRN_EMBEDDING__MODEL_DIR": str(self.model_dir),
            "CAIRN_LOG_LEVEL": "INFO",
        }

    def start(self) -> None:
        self.postgres.start()
        self.nats.start()
        subprocess.run(
            [*CAIRN, "migrate"], env=self.env(), check=True, capture_output=True, timeout=300
        )
        self.start_serve()
        for worker in self.worker_processes:
            self.start_worker(worker)

    def cairn_source(self) -> str:
        """Where the spawned processes import ``cairn`` from (proof of what was measured)."""
        code = "import cairn; print(cairn.__file__)"
        result = subprocess.run(
            [CAIRN[0], "-c", code], env=self.env(), capture_output=True, text=True, check=False
        )
        return result.stdout.strip()

    def _spawn(self, process: Process) -> None:
        process.starts += 1
        process.log = self.root / "logs" / f"{process.name}.{process.starts}.log"
        process.log.parent.mkdir(parents=True, exist_ok=True)
        with process.log.open("wb") as out:
            process.popen = subprocess.Popen(
                [*CAIRN, *process.args],
                env=self.env() | process.env,
                stdout=out,
                stderr=out,
                cwd=self.root,
            )

    def start_serve(self) -> float:
        """Start ``cairn serve`` and wait for ``/ready``; the seconds it took."""
        started = time.monotonic()
        self._spawn(self.serve)
        deadline = started + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            self._fail_if_exited(self.serve)
            try:
                if httpx.get(f"{self.url}/ready", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"cairn serve not ready in {READY_TIMEOUT_S} s: {self.serve.log}")

    def start_worker(self, worker: Process) -> float:
        """Start a worker and wait until it consumes; the seconds it took."""
        started = time.monotonic()
        self._spawn(worker)
        assert worker.log is not None
        while time.monotonic() < started + READY_TIMEOUT_S:
            self._fail_if_exited(worker)
            if WORKER_READY_LINE in worker.log.read_text(errors="replace"):
                return time.monotonic() - started
            time.sleep(0.1)
        raise RuntimeError(f"{worker.name} not consuming in {READY_TIMEOUT_S} s: {worker.log}")

    @staticmethod
    def log_text(process: Process) -> str:
        """The log of the process's current incarnation."""
        return process.log.read_text(errors="replace") if process.log else ""

    @staticmethod
    def _fail_if_exited(process: Process) -> None:
        if process.popen is not None and process.popen.poll() is not None:
            tail = process.log.read_text(errors="replace")[-3000:] if process.log else ""
            raise RuntimeError(f"{process.name} exited ({process.popen.returncode}):\n{tail}")

    @staticmethod
    def kill(process: Process) -> None:
        """``kill -9``: no shutdown, no drain, as a crash or the OOM killer would."""
        if process.alive:
            assert process.popen is not None
            process.popen.send_signal(signal.SIGKILL)
            process.popen.wait()

    @staticmethod
    def terminate(process: Process) -> None:
        if not process.alive:
            return
        assert process.popen is not None
        process.popen.terminate()
        try:
            process.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.wait()

    def heal(self) -> list[str]:
        """Bring back whatever a failed scenario left down; what had to be restarted."""
        healed = []
        if not self.nats.running:
            self.nats.start()
            healed.append("nats")
        if not self.postgres_running():
            self.postgres.start()
            healed.append("postgres")
        if not self.serve.alive:
            self.start_serve()
            healed.append("serve")
        for worker in self.worker_processes:
            if not worker.alive:
                self.start_worker(worker)
                healed.append(worker.name)
        return healed

    def postgres_running(self) -> bool:
        from cairn.runtime._pg_host import postmaster_pid

        return postmaster_pid(self.postgres.data_dir) is not None

    def close(self) -> None:
        """Stop everything this topology started; safe to call twice, and after a failure."""
        for process in [self.serve, *self.worker_processes]:
            try:
                self.terminate(process)
            except Exception as error:  # keep stopping the others
                print(f"stopping {process.name}: {error}", file=sys.stderr)
        for service in (self.nats, self.postgres):
            try:
                service.stop()
            except Exception as error:
                print(f"stopping {type(service).__name__}: {error}", file=sys.stderr)
                service.kill()
