"""The fault suite's worker-crash scenario, short, inside `make test`: the real topology
(embedded PostgreSQL and NATS, `cairn serve`, two `cairn worker` processes), one worker
killed with SIGKILL twice under load, and not one acknowledged trigger may go without its
context. The other scenarios run with `make faults` (see benchmarks/faults.py)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from benchmarks.faultbench.common import Durations, Result
from benchmarks.faultbench.suite import run_all
from benchmarks.faultbench.topology import Topology

pytestmark = pytest.mark.slow


def test_worker_kill_loses_no_context(model_dir: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="cairn-faults-test-"))
    topology = Topology(root, model_dir)
    results: list[Result] = []
    durations = replace(Durations.short(), load_s=4.0, settle_s=45.0)
    try:
        topology.start()
        asyncio.run(run_all(topology, ["worker_kill"], durations, results))
    finally:
        topology.close()
        shutil.rmtree(root, ignore_errors=True)
    [result] = results
    assert result.error is None
    assert result.acknowledged > 0
    assert (result.lost, result.unexpected_5xx) == (0, 0), result.as_json()
