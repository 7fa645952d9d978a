"""Operating-system chores around the bundled PostgreSQL: binaries, user, dirs, processes.

PostgreSQL refuses to run as root, so as root every binary runs as the system user
``pgserver`` (the one the pgserver package itself creates).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import stat
import subprocess
import time
from pathlib import Path

from cairn.runtime.ports import EmbeddedServerError

SYSTEM_USER = "pgserver"
TIMEOUT_S = 60
# sun_path is 108 bytes including the NUL; postgres rejects longer socket paths.
_MAX_SOCKET_PATH = 107
_PROC = Path("/proc")


def pg_bin_dir() -> Path:
    """The ``bin`` directory of the PostgreSQL build inside the pgserver wheel."""
    # find_spec locates the package without importing it (its import scans directories).
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError("the pgserver package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def system_user() -> pwd.struct_passwd | None:
    """The user to run PostgreSQL as: ``pgserver`` when we are root, else ourselves (None)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    cmd = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:  # a concurrent process may have created it first
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        raise EmbeddedServerError(f"cannot create user {SYSTEM_USER}: {result.stderr}") from None


def _make_traversable(path: Path) -> None:
    """Let other users traverse every parent of ``path`` (``o+x``), as pgserver does."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def own_dir(path: Path, user: pwd.struct_passwd | None) -> None:
    """Create ``path`` (0700) and hand it to ``user``, whose binaries must be reachable too."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if user is None:
        return
    _make_traversable(path)
    _make_traversable(pg_bin_dir() / "postgres")
    if path.stat().st_uid == user.pw_uid:
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)


def socket_dir_for(data_dir: Path) -> Path:
    """The data dir when its socket path fits in sun_path, else a short per-data-dir /tmp dir."""
    if len(os.fsencode(data_dir / ".s.PGSQL.65535")) <= _MAX_SOCKET_PATH:
        return data_dir
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
    return Path("/tmp") / f"cairn-pg-{digest}"


def run_pg(
    args: list[str], user: pwd.struct_passwd | None, *, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a bundled binary (as ``user`` if given); never raises on a non-zero exit."""
    # PG* variables (PGPORT, PGOPTIONS...) would silently change what the binaries do.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run(
        [str(pg_bin_dir() / args[0]), *args[1:]],
        input=stdin,
        capture_output=True,  # safe: pg_ctl -l sends the postmaster's output to the log file
        text=True,
        env=env,
        cwd="/",  # the pgserver user may not be able to read our working directory
        timeout=TIMEOUT_S,
        check=False,
        user=None if user is None else user.pw_uid,
        group=None if user is None else user.pw_gid,
        extra_groups=None if user is None else [],
    )


def postmaster_pid(data_dir: Path) -> int | None:
    """The pid in ``postmaster.pid`` if that process is a live postgres serving ``data_dir``."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    return pid if serves(pid, data_dir) else None


def serves(pid: int, data_dir: Path) -> bool:
    """Whether ``pid`` is a live postgres process of ``data_dir`` (they all chdir into it).

    A stale ``postmaster.pid`` may name a pid reused since, even by another cluster's postgres.
    A zombie (killed, not yet reaped) has no cwd and counts as gone.
    """
    if not _PROC.is_dir():  # no /proc (macOS): trust the pid
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        comm = (_PROC / str(pid) / "comm").read_text().strip()
        cwd = os.readlink(_PROC / str(pid) / "cwd")
    except OSError:
        return False
    return comm == "postgres" and cwd == os.path.realpath(data_dir)


def remove_stale_pid_file(data_dir: Path) -> bool:
    """Delete a ``postmaster.pid`` whose postmaster is dead, once its children are gone too.

    PostgreSQL handles a stale file itself unless the dead postmaster is still an unreaped
    zombie: then ``kill(pid, 0)`` succeeds and it refuses to start. Waiting for the orphaned
    backends first keeps its protection against two servers sharing one data dir.
    """
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists() or not _PROC.is_dir():
        return False
    deadline = time.monotonic() + TIMEOUT_S
    while any(serves(int(p.name), data_dir) for p in _PROC.iterdir() if p.name.isdigit()):
        if time.monotonic() > deadline:
            raise EmbeddedServerError(f"old postgres processes still run in {data_dir}")
        time.sleep(0.01)
    pid_file.unlink(missing_ok=True)
    return True


def remove_stale_socket(socket_dir: Path, port: int) -> None:
    """Delete the socket and lock file a killed postmaster left for ``port``.

    Only call it when no postmaster serves the data dir: the socket dir is the data dir's
    own. PostgreSQL would refuse the lock of a dead but unreaped (zombie) postmaster, which
    matters since a restart keeps the port and so reuses the lock file's name.
    """
    for name in (f".s.PGSQL.{port}", f".s.PGSQL.{port}.lock"):
        (socket_dir / name).unlink(missing_ok=True)


def wait_until_gone(pid: int, data_dir: Path) -> bool:
    """Whether the postgres ``pid`` exited within the timeout."""
    deadline = time.monotonic() + TIMEOUT_S
    while serves(pid, data_dir):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
