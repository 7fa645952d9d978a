"""What every scenario shares: the run it belongs to, its durations, and its result row."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .load import TRIGGER_TAG, Tally
from .topology import Topology


@dataclass(frozen=True)
class Durations:
    """Every scenario's knobs; ``--short`` shrinks them to seconds."""

    rate: float = 5.0  # triggers per second
    load_s: float = 60.0  # load around a fault
    worker_kills: int = 3
    nats_down_s: float = 60.0
    postgres_down_s: float = 60.0
    serve_kills: int = 3
    late_triggers: int = 40
    sse_churn: int = 2000  # connections opened and dropped
    soak_s: float = 600.0
    rss_every_s: float = 5.0
    webhook_rounds: int = 10
    # Waits for the system to catch up: after a fault, above JetStream's 30 s redelivery of
    # unacked events; without one, what a healthy assembly needs.
    settle_s: float = 120.0
    assembly_wait_s: float = 30.0

    @classmethod
    def short(cls) -> Durations:
        return cls(
            load_s=6.0,
            worker_kills=2,
            nats_down_s=5.0,
            postgres_down_s=5.0,
            serve_kills=2,
            late_triggers=20,
            sse_churn=200,
            soak_s=15.0,
            rss_every_s=1.0,
            webhook_rounds=5,
            settle_s=75.0,
            assembly_wait_s=20.0,
        )


@dataclass
class Run:
    topology: Topology
    http: httpx.AsyncClient
    durations: Durations
    run_id: str
    agent_id: str  # the agent every scenario but the late-agent one triggers

    def tags(self, scenario: str) -> list[str]:
        return [TRIGGER_TAG, f"fault:{self.run_id}-{scenario}"]


@dataclass
class Result:
    name: str
    title: str
    operations: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    http_5xx: int = 0
    unexpected_5xx: int = 0
    recovery_s: float | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def failed(self) -> bool:
        """The gate: anything lost, a 5xx a correct service would not give, or a scenario
        that could not run to the end."""
        return self.lost > 0 or self.unexpected_5xx > 0 or self.error is not None

    def count(self, tally: Tally, allow_503: bool = False, operations: bool = True) -> None:
        """Add ``tally``'s answers; ``operations`` False for the harness's own checks (their
        5xx count, their number does not)."""
        if operations:
            self.operations += tally.operations
        self.http_5xx += tally.server_errors
        self.unexpected_5xx += tally.unexpected_5xx(allow_503)
        self.details.setdefault("http", []).append(tally.summary())

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "passed": not self.failed,
            "operations": self.operations,
            "acknowledged": self.acknowledged,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "5xx": self.http_5xx,
            "unexpected_5xx": self.unexpected_5xx,
            "recovery_s": None if self.recovery_s is None else round(self.recovery_s, 1),
            "seconds": round(self.seconds, 1),
            "notes": "; ".join(self.notes),
            "details": self.details,
            "error": self.error,
        }


def since(moment: float | None, start: float) -> float | None:
    """Seconds from ``start`` to ``moment`` (never negative), None when it never happened."""
    return None if moment is None else max(0.0, moment - start)


def rss_mb(pid: int) -> float:
    """Resident memory of a process (VmRSS in /proc), 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def now() -> float:
    return time.monotonic()
