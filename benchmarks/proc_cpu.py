"""CPU seconds of the processes a benchmark started, from /proc (Linux).

On a machine shared with others, wall-clock rates move with everyone's load; the CPU a
process spent per unit of work moves much less. ``CpuAccount`` snapshots the server
process (its event-loop thread apart from its other threads) and the embedded PostgreSQL
and NATS it started (found by their data directory on the command line).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_s(stat_path: Path, *, reaped: bool = False) -> float:
    """utime + stime of a /proc stat file; 0 for a process or thread that is gone.
    ``reaped``: with the CPU of the children it waited for (PostgreSQL's backends that
    ended between two snapshots are counted in their postmaster's)."""
    try:
        text = stat_path.read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    own = int(fields[11]) + int(fields[12])
    children = int(fields[13]) + int(fields[14]) if reaped else 0
    return (own + children) / TICKS


def scheduled_s(pid: int) -> float:
    """A process's time on a CPU by the scheduler's count (/proc/PID/schedstat, in ns):
    finer than the clock ticks of ``stat``, for the CPU of one statement or write."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


def _pids_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


@dataclass(frozen=True, slots=True)
class Snapshot:
    server_main: float
    server_other: float
    postgres: float
    nats: float


class CpuAccount:
    def __init__(self, server_pid: int, data_dir: Path) -> None:
        self.server_pid = server_pid
        self.data_dir = str(data_dir)

    def snapshot(self) -> Snapshot:
        task = Path(f"/proc/{self.server_pid}/task")
        main = _cpu_s(task / str(self.server_pid) / "stat")
        total = _cpu_s(Path(f"/proc/{self.server_pid}/stat"))
        postgres = nats = 0.0
        for pid in _pids_with(self.data_dir):
            if pid == self.server_pid:
                continue
            comm = _comm(pid)
            if comm.startswith("nats"):
                nats += _cpu_s(Path(f"/proc/{pid}/stat"))
            elif comm.startswith("postgres"):
                postgres += _cpu_s(Path(f"/proc/{pid}/stat"), reaped=True)
        # PostgreSQL's backends carry no data directory on their command line: its
        # postmaster's children are counted through the postmaster's pid.
        postgres += sum(_cpu_s(Path(f"/proc/{pid}/stat")) for pid in self._backends())
        return Snapshot(main, total - main, postgres, nats)

    def _backends(self) -> list[int]:
        postmasters = {
            pid
            for pid in _pids_with(self.data_dir)
            if _comm(pid).startswith("postgres") and pid != self.server_pid
        }
        children = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            if ppid in postmasters:
                children.append(int(entry.name))
        return children


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def per_item_ms(before: Snapshot, after: Snapshot, items: int) -> dict[str, float]:
    """CPU milliseconds per item between two snapshots, per part and in total."""
    parts = {
        "server_event_loop": after.server_main - before.server_main,
        "server_other_threads": after.server_other - before.server_other,
        "postgres": after.postgres - before.postgres,
        "nats": after.nats - before.nats,
    }
    out = {name: round(seconds * 1000 / items, 2) for name, seconds in parts.items()}
    out["total"] = round(sum(parts.values()) * 1000 / items, 2)
    return out
