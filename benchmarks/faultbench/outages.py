"""Scenarios where a dependency goes away under load: NATS and PostgreSQL, each down for a
while and then back on the same port with the same data."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from .common import Result, Run, now, since
from .contexts import contexts_into
from .load import Tally, TriggerLoad
from .observe import SseFollower, delivery_check


async def _outage_under_load(
    run: Run,
    load: TriggerLoad,
    stop_service: Callable[[], None],
    start_service: Callable[[], object],
    down_s: float,
) -> float:
    """Load before, during and after an outage of ``down_s``; when the service was back."""
    stop = asyncio.Event()
    posting = asyncio.create_task(load.run(stop))
    await asyncio.sleep(min(run.durations.load_s / 4, 10))
    await asyncio.to_thread(stop_service)
    await asyncio.sleep(down_s)
    await asyncio.to_thread(start_service)
    back = now()
    await asyncio.sleep(min(run.durations.load_s / 4, 10))
    stop.set()
    await posting
    return back


async def _sse_delivered(follower: SseFollower, ids: list[str], wait_s: float) -> None:
    deadline = now() + wait_s
    while now() < deadline and not set(ids) <= set(follower.created_ids()):
        await asyncio.sleep(0.5)


def _sse_into(result: Result, follower: SseFollower, ids: list[str]) -> None:
    """What the SSE subscriber saw of ``ids`` (acknowledged in this order), into ``result``;
    its 503s while NATS was away are expected, any other 5xx is not."""
    check = delivery_check(ids, follower.created_ids())
    sse_5xx = sum(n for status, n in follower.statuses.items() if status >= 500)
    result.http_5xx += sse_5xx
    result.unexpected_5xx += sse_5xx - follower.statuses[503]
    result.lost += check["lost"]
    result.duplicated += check["duplicated"]
    result.details["sse"] = check | {
        "statuses": {str(k): v for k, v in follower.statuses.items()},
        "errors": dict(follower.errors),
    }
    result.notes.append(
        f"SSE: lost {check['lost']}, duplicated {check['duplicated']},"
        f" out of order {check['out_of_order']}, reconnects {follower.statuses.total() - 1}"
    )


async def nats_down(run: Run) -> Result:
    """NATS stopped during writes: the writes are accepted, and afterwards every event
    reaches an SSE subscriber (reconnecting with Last-Event-ID) once and in order, and every
    trigger is assembled."""
    d, topology = run.durations, run.topology
    result = Result("nats_down", f"NATS down {d.nats_down_s:g} s during writes")
    tags = run.tags("nats")
    follower = SseFollower(run.http, {"any_tags": tags[1]})
    following = asyncio.create_task(follower.run())
    try:
        await asyncio.wait_for(follower.connected.wait(), 15)
        tally = Tally()
        # One post at a time: commit order is then acknowledgement order, checked below.
        load = TriggerLoad(run.http, tally, f"{run.run_id}-nats", tags, d.rate, in_flight=1)
        back = await _outage_under_load(
            run, load, topology.nats.stop, topology.nats.start, d.nats_down_s
        )
        ids = [str(t.id) for t in load.acknowledged]
        await _sse_delivered(follower, ids, d.settle_s)
    finally:
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following
    result.count(tally)
    result.acknowledged = len(ids)
    _sse_into(result, follower, ids)
    last_context = await contexts_into(result, run, run.agent_id, load.triggers, d.settle_s)
    arrivals = [t for t in (follower.last_arrival, last_context) if t is not None]
    result.recovery_s = since(max(arrivals, default=None), back)
    result.notes.append("recovery: NATS back → last event and context")
    return result


async def postgres_down(run: Run) -> Result:
    """PostgreSQL stopped under load: requests answer 503 meanwhile (any other 5xx is a
    failure), and afterwards every trigger acknowledged before or after gets its context."""
    d, topology = run.durations, run.topology
    result = Result("postgres_down", f"PostgreSQL down {d.postgres_down_s:g} s under load")
    tally = Tally()
    load = TriggerLoad(run.http, tally, f"{run.run_id}-pg", run.tags("pg"), d.rate)
    back = await _outage_under_load(
        run, load, topology.postgres.stop, topology.postgres.start, d.postgres_down_s
    )
    result.count(tally, allow_503=True)
    result.acknowledged = len(load.acknowledged)
    refused = tally.statuses[503]
    result.notes.append(f"{refused} writes answered 503 while it was down")
    last = await contexts_into(result, run, run.agent_id, load.triggers, d.settle_s)
    result.recovery_s = since(last, back)
    result.notes.append("recovery: PostgreSQL back → last context")
    return result
