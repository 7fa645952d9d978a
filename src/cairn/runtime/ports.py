"""TCP port helpers shared by the embedded PostgreSQL and NATS, and their error type."""

from __future__ import annotations

import socket
import subprocess
import time

from cairn.errors import Unavailable

_POLL_INTERVAL_S = 0.005


class EmbeddedServerError(Unavailable):
    """An embedded server (PostgreSQL, NATS) failed to start or stop."""

    code = "embedded_server_error"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now; another process may still take it before we bind."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


def wait_for_port(
    host: str,
    port: int,
    timeout: float,
    *,
    process: subprocess.Popen[bytes] | None = None,
) -> None:
    """Block until ``host:port`` accepts TCP connections.

    Raises ``EmbeddedServerError`` after ``timeout`` seconds, or at once if ``process`` (the
    server expected to listen there) has exited.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise EmbeddedServerError(
                f"process {process.pid} exited with code {process.returncode} "
                f"before listening on {host}:{port}"
            )
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            raise EmbeddedServerError(f"nothing listens on {host}:{port} after {timeout:.1f} s")
        time.sleep(_POLL_INTERVAL_S)
