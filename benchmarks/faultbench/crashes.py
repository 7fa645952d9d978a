"""Scenarios where a Cairn process dies (``kill -9``) or joins late: worker crash, server
crash, and an agent defined after the workers started."""

from __future__ import annotations

import asyncio

from .common import Result, Run, now, since
from .contexts import contexts_into, count_contexts, create_agent
from .load import Tally, TriggerLoad, run_for
from .observe import created_events_since, stream_sequence

ASSEMBLED = "assembled 1 contexts for"  # a worker's DEBUG line per assembly


async def worker_kill(run: Run) -> Result:
    """Triggers posted continuously; one worker is killed with SIGKILL several times and
    restarted: every trigger must still be assembled, once."""
    d, topology = run.durations, run.topology
    result = Result("worker_kill", f"worker kill -9 x{d.worker_kills} under load")
    tally = Tally()
    load = TriggerLoad(run.http, tally, f"{run.run_id}-wk", run.tags("wk"), d.rate)
    stop = asyncio.Event()
    posting = asyncio.create_task(load.run(stop))
    worker, interval = topology.worker_processes[0], d.load_s / (d.worker_kills + 1)
    restarted = now()
    for _ in range(d.worker_kills):
        await asyncio.sleep(interval)
        topology.kill(worker)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(topology.start_worker, worker)
        restarted = now()
    await asyncio.sleep(interval)
    stop.set()
    await posting
    result.count(tally)
    result.acknowledged = len(load.acknowledged)
    last = await contexts_into(result, run, run.agent_id, load.triggers, d.settle_s)
    result.recovery_s = since(last, restarted)
    result.notes.append("recovery: last restart → last context")
    return result


async def _restart_serve_under_load(run: Run, load: TriggerLoad) -> list[float]:
    """Kill and restart ``cairn serve`` while ``load`` posts; the restart times."""
    d, topology = run.durations, run.topology
    stop = asyncio.Event()
    posting = asyncio.create_task(load.run(stop))
    interval, restarts = d.load_s / (d.serve_kills + 1), []
    for _ in range(d.serve_kills):
        await asyncio.sleep(interval)
        topology.kill(topology.serve)
        restarts.append(await asyncio.to_thread(topology.start_serve))
    await asyncio.sleep(interval)
    stop.set()
    await posting
    return restarts


async def serve_kill(run: Run) -> Result:
    """``cairn serve`` killed with SIGKILL during writes: every acknowledged (201) record must
    exist afterwards, its ``created`` event must be on the stream once, and be assembled."""
    d = run.durations
    result = Result("serve_kill", f"cairn serve kill -9 x{d.serve_kills} during writes")
    first_seq = await stream_sequence(run.topology.nats.url)
    tally = Tally()
    load = TriggerLoad(run.http, tally, f"{run.run_id}-sk", run.tags("sk"), d.rate, in_flight=4)
    restarts = await _restart_serve_under_load(run, load)
    result.count(tally)
    acknowledged = load.acknowledged
    result.acknowledged = len(acknowledged)
    checks = Tally()
    missing_rows = 0
    for trigger in acknowledged:
        response = await checks.request(run.http, "GET", f"/breadcrumbs/{trigger.id}")
        missing_rows += response is None or response.status_code != 200
    result.count(checks, operations=False)
    events = await _created_events(run, first_seq, [str(t.id) for t in acknowledged])
    missing_events = sum(1 for t in acknowledged if events[str(t.id)] == 0)
    result.duplicated += sum(events[str(t.id)] - 1 for t in acknowledged if events[str(t.id)])
    result.lost += missing_rows + missing_events
    result.notes.append(f"rows missing {missing_rows}, events missing {missing_events}")
    await contexts_into(result, run, run.agent_id, load.triggers, d.settle_s)
    result.recovery_s = max(restarts, default=None)
    result.notes.append("recovery: restart → /ready")
    return result


async def _created_events(run: Run, first_seq: int, ids: list[str]) -> dict[str, int]:
    """How often each id's ``created`` event reached the stream, waiting for the outbox
    relay of the restarted server to publish what the killed one left."""
    deadline = now() + run.durations.settle_s
    while True:
        found = await created_events_since(run.topology.nats.url, first_seq)
        if all(found[i] for i in ids) or now() > deadline:
            return {i: found[i] for i in ids}
        await asyncio.sleep(1)


async def _warm_both_workers(run: Run) -> list[str]:
    """Post triggers for the common agent until every worker assembled one (so each has
    loaded the tenant's agents); the workers still cold after ten rounds."""
    d, workers = run.durations, run.topology.worker_processes
    for round_no in range(10):
        cold = [w for w in workers if ASSEMBLED not in run.topology.log_text(w)]
        if not cold:
            return []
        warm = TriggerLoad(
            run.http, Tally(), f"{run.run_id}-warm{round_no}", run.tags("warm"), d.rate
        )
        warm.limit = 4
        await run_for(warm, 4 / d.rate + 0.5)
        await count_contexts(run.http, Tally(), run.agent_id, warm.triggers, d.assembly_wait_s)
    return [w.name for w in workers if ASSEMBLED not in run.topology.log_text(w)]


def _assemblies_by_worker(run: Run, ids: set[str]) -> dict[str, int]:
    """How many of the records ``ids`` each worker logged an assembly for."""
    counts = {}
    for worker in run.topology.worker_processes:
        lines = run.topology.log_text(worker).splitlines()
        counts[worker.name] = sum(1 for line in lines if ASSEMBLED in line and line[-36:] in ids)
    return counts


async def late_agent(run: Run) -> Result:
    """An agent defined after both workers started (and had loaded the tenant's agents):
    every trigger for it must be assembled, whichever worker receives it."""
    d = run.durations
    result = Result("late_agent", "agent created after both workers started")
    still_cold = await _warm_both_workers(run)
    agent_id, trigger_tag = f"fault-late-{run.run_id}", f"fault:late-{run.run_id}"
    await create_agent(run.http, agent_id, trigger_tag)
    tally = Tally()
    tags = [trigger_tag, f"fault:{run.run_id}-late"]
    load = TriggerLoad(run.http, tally, f"{run.run_id}-late", tags, d.rate, d.late_triggers)
    await run_for(load, d.late_triggers / d.rate + 2)
    result.count(tally)
    result.acknowledged = len(load.acknowledged)
    await contexts_into(result, run, agent_id, load.triggers, d.assembly_wait_s)
    by_worker = _assemblies_by_worker(run, {str(t.id) for t in load.acknowledged})
    result.details["assembled_by"] = by_worker
    result.notes.append("assembled by " + ", ".join(f"{k}: {v}" for k, v in by_worker.items()))
    if still_cold:
        result.notes.append("not warmed before the agent was created: " + ", ".join(still_cold))
    return result
