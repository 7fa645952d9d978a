"""PostgreSQL 16 + pgvector from the ``pgserver`` wheel, listening on TCP and a unix socket.

We drive the wheel's bundled ``initdb``/``pg_ctl``/``psql`` ourselves because pgserver's
Python API only listens on a unix socket.
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shlex
import shutil
import signal
import time
from pathlib import Path
from types import TracebackType

from cairn.runtime import _pg_host as host
from cairn.runtime.ports import EmbeddedServerError, free_port

logger = logging.getLogger(__name__)

SUPERUSER = "postgres"
_HOST = "127.0.0.1"
_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_SETTINGS = {
    "shared_buffers": "128MB",
    "max_connections": "200",
    "maintenance_work_mem": "256MB",
}
# For tests: an OS crash may corrupt the data, a killed server loses nothing. Not
# synchronous_commit=off: with fsync off it saved nothing measurable (~150 us/commit either
# way) and it makes a SIGKILLed server lose its last commits, which breaks crash tests.
_FAST_SETTINGS = {"fsync": "off", "full_page_writes": "off"}


class EmbeddedPostgres:
    """One PostgreSQL server on a data directory.

    ``start`` reuses a server already running on the directory (e.g. left by a crashed
    ``cairn up``); ``stop`` stops whichever server runs there.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        database: str = "cairn",
        fast: bool = False,
    ) -> None:
        if not _DATABASE_NAME.fullmatch(database):
            raise ValueError(f"invalid database name: {database!r}")
        self.data_dir = Path(data_dir).absolute()
        self.database = database
        self.fast = fast
        self._requested_port = port
        self._port = port
        self._log_file = self.data_dir / "postgres.log"

    @property
    def port(self) -> int:
        if self._port is None:
            raise EmbeddedServerError("PostgreSQL has no port yet: call start() first")
        return self._port

    @property
    def url(self) -> str:
        """SQLAlchemy URL (asyncpg driver)."""
        return f"postgresql+asyncpg://{SUPERUSER}@{_HOST}:{self.port}/{self.database}"

    def url_for(self, role: str) -> str:
        """SQLAlchemy URL logging in as ``role`` (local logins are trusted: no password).
        ``cairn up`` and the tests serve as the application role revision 0005 creates."""
        return f"postgresql+asyncpg://{role}@{_HOST}:{self.port}/{self.database}"

    @property
    def dsn(self) -> str:
        """Plain libpq URL for asyncpg and psql."""
        return f"postgresql://{SUPERUSER}@{_HOST}:{self.port}/{self.database}"

    @property
    def socket_dir(self) -> Path:
        return host.socket_dir_for(self.data_dir)

    @property
    def running(self) -> bool:
        """Whether a postmaster serves the data dir now (it may have been stopped outside)."""
        return host.postmaster_pid(self.data_dir) is not None

    def start(self) -> str:
        """Init the data dir if new, start the server, create the database and ``vector``."""
        started = time.monotonic()
        user = host.system_user()
        host.own_dir(self.data_dir, user)
        created = not (self.data_dir / "PG_VERSION").exists()
        if created:
            self._initdb(user)
        running_port = self._running_port()
        if running_port is None:
            if host.remove_stale_pid_file(self.data_dir):
                logger.warning("removed the stale postmaster.pid of a killed PostgreSQL")
            # A restart keeps the first start's port: pools reconnect to the same URL.
            self._port = self._port or free_port(_HOST)
            host.remove_stale_socket(self.socket_dir, self._port)
            self._pg_ctl_start(user)
        else:  # left running by us or by an earlier process: reuse it
            if self._requested_port not in (None, running_port):
                logger.warning("PostgreSQL already runs on port %d; reusing it", running_port)
            self._port = running_port
        self._ensure_database(user)
        logger.info(
            "PostgreSQL ready on %s:%d (%s data dir %s) in %.2f s",
            _HOST,
            self.port,
            "new" if created else "existing",
            self.data_dir,
            time.monotonic() - started,
        )
        return self.url

    def stop(self) -> None:
        """Fast shutdown (rolls back open transactions); does nothing if not running."""
        # SIGINT is what `pg_ctl stop -m fast` sends; signalling it ourselves needs no access
        # to the data dir's path, which a concurrent pytest may make untraversable (0700).
        pid = host.postmaster_pid(self.data_dir)
        if pid is None:
            return
        os.kill(pid, signal.SIGINT)
        if not host.wait_until_gone(pid, self.data_dir):
            raise EmbeddedServerError(f"PostgreSQL (pid {pid}) did not stop\n{self._log_tail()}")
        if self.socket_dir != self.data_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        logger.info("PostgreSQL on %s stopped", self.data_dir)

    def kill(self) -> None:
        """SIGKILL the postmaster, as a crash would (for failure tests)."""
        pid = host.postmaster_pid(self.data_dir)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            host.wait_until_gone(pid, self.data_dir)
            logger.info("PostgreSQL postmaster %d killed", pid)

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _initdb(self, user: pwd.struct_passwd | None) -> None:
        args = ["initdb", "-D", str(self.data_dir), "-U", SUPERUSER, "--auth=trust"]
        args += ["--encoding=UTF8", "--no-locale", "--no-instructions"]
        if self.fast:
            args.append("--no-sync")
        result = host.run_pg(args, user)
        if result.returncode != 0:
            raise EmbeddedServerError(f"initdb failed: {result.stderr.strip()}")

    def _running_port(self) -> int | None:
        """The port of a server already running on the data dir, if any."""
        if host.postmaster_pid(self.data_dir) is None:
            return None
        lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        if len(lines) < 6 or _HOST not in lines[5].split(","):
            raise EmbeddedServerError(f"a PostgreSQL on {self.data_dir} runs without TCP {_HOST}")
        return int(lines[3])

    def _pg_ctl_start(self, user: pwd.struct_passwd | None) -> None:
        socket_dir = self.socket_dir
        if socket_dir != self.data_dir:
            host.own_dir(socket_dir, user)
        settings = {
            "listen_addresses": _HOST,
            "port": str(self.port),
            "unix_socket_directories": str(socket_dir),
            **_SETTINGS,
            **(_FAST_SETTINGS if self.fast else {}),
        }
        # pg_ctl hands -o to /bin/sh, hence the quoting.
        options = " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in settings.items())
        args = ["pg_ctl", "start", "-D", str(self.data_dir), "-w", "-t", str(host.TIMEOUT_S)]
        result = host.run_pg([*args, "-l", str(self._log_file), "-o", options], user)
        if result.returncode != 0:
            raise EmbeddedServerError(
                f"pg_ctl start failed: {result.stderr.strip()}\n{self._log_tail()}"
            )

    def _ensure_database(self, user: pwd.struct_passwd | None) -> None:
        # Quoted so a mixed-case name is created as spelled, as \connect and the URL use it.
        script = (
            f"SELECT 'CREATE DATABASE \"{self.database}\"' WHERE NOT EXISTS "
            f"(SELECT FROM pg_database WHERE datname = '{self.database}')\\gexec\n"
            f"\\connect {self.database}\n"
            "SET client_min_messages = warning;\n"
            "CREATE EXTENSION IF NOT EXISTS vector;\n"
        )
        # Over TCP: the socket path may be untraversable for a moment (see stop).
        args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", _HOST]
        args += ["-p", str(self.port), "-U", SUPERUSER, "-d", "postgres"]
        result = host.run_pg(args, user, stdin=script)
        if result.returncode != 0:
            raise EmbeddedServerError(f"creating database {self.database}: {result.stderr}")

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self._log_file.read_text().splitlines()[-lines:])
        except OSError:
            return "(no server log)"
