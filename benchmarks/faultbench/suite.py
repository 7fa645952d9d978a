"""The scenarios in the order they run, and running them on one shared topology."""

from __future__ import annotations

import asyncio
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable

import httpx

from . import crashes, outages, spotchecks, traffic
from .common import Durations, Result, Run
from .contexts import create_agent
from .load import TRIGGER_TAG
from .topology import Topology

Scenario = Callable[[Run], Awaitable[Result]]
SCENARIOS: dict[str, Scenario] = {
    "worker_kill": crashes.worker_kill,
    "nats_down": outages.nats_down,
    "postgres_down": outages.postgres_down,
    "serve_kill": crashes.serve_kill,
    "late_agent": crashes.late_agent,
    "sse_churn": traffic.sse_churn,
    "soak": traffic.soak,
    "bad_input": spotchecks.bad_input,
    "webhook_after_write": spotchecks.webhook_after_write,
}


async def run_scenario(name: str, run: Run) -> Result:
    """One scenario on a healthy topology; an exception becomes the scenario's error."""
    healed = await asyncio.to_thread(run.topology.heal)
    started = time.monotonic()
    print(f"→ {name}", flush=True)
    try:
        result = await SCENARIOS[name](run)
    except Exception as error:
        traceback.print_exc()
        result = Result(name, name, error=f"{type(error).__name__}: {error}"[:300])
    result.seconds = time.monotonic() - started
    if healed:
        result.notes.append("restarted first: " + ", ".join(healed))
    print(f"  {name}: {result.as_json() | {'details': '…'}}", flush=True)
    return result


async def run_all(
    topology: Topology, names: list[str], durations: Durations, results: list[Result]
) -> None:
    """Run ``names`` in order into ``results`` (kept when interrupted halfway)."""
    run_id = uuid.uuid4().hex[:8]
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=topology.url, timeout=15, limits=limits) as http:
        run = Run(topology, http, durations, run_id, f"fault-{run_id}")
        # After both workers started, before they handled any event of the tenant.
        await create_agent(http, run.agent_id, TRIGGER_TAG)
        for name in names:
            results.append(await run_scenario(name, run))
