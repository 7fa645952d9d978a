"""``GET /workers``: whether a worker is consuming the event stream, read from the workers'
shared JetStream durable consumer. No heartbeat table: NATS already knows who pulls.

A worker waits on the consumer with a pull request (it renews one every second while idle)
and holds what it is handling unacknowledged, so a consumer with neither has no worker
behind it. Like ``/ready`` and ``/metrics``, the figures are the process's, not a tenant's:
counts of events, no content."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Literal

from fastapi import APIRouter
from nats.js.api import ConsumerInfo
from nats.js.errors import NotFoundError
from pydantic import BaseModel, Field

from cairn.api.deps import ResourcesDep
from cairn.events.payloads import STREAM_NAME

router = APIRouter(tags=["operations"])

WorkerState = Literal["pulling", "busy", "none", "no_consumer", "unknown"]
# Between two pull requests a live worker has none open for a moment: look twice.
SECOND_LOOK_S = 0.15


class WorkerConsumer(BaseModel):
    name: str = Field(description="the durable consumer the workers share")
    state: WorkerState = Field(
        description="pulling: a worker waits for events; busy: workers are handling events; "
        "none: no worker is connected; no_consumer: no worker ever started on this stream; "
        "unknown: NATS is not reachable"
    )
    waiting_pulls: int = Field(0, description="open pull requests (idle workers waiting)")
    in_progress: int = Field(0, description="events delivered and not yet acknowledged")
    pending: int = Field(0, description="events on the stream not yet delivered")
    redelivered: int = Field(0, description="events delivered more than once, not yet acked")
    last_delivery: dt.datetime | None = Field(None, description="when an event was last handed out")


class Workers(BaseModel):
    consumers: list[WorkerConsumer]


def consumer_state(info: ConsumerInfo) -> WorkerState:
    if info.num_ack_pending:
        return "busy"
    return "pulling" if info.num_waiting else "none"


def describe(name: str, info: ConsumerInfo) -> WorkerConsumer:
    return WorkerConsumer(
        name=name,
        state=consumer_state(info),
        waiting_pulls=info.num_waiting or 0,
        in_progress=info.num_ack_pending or 0,
        pending=info.num_pending or 0,
        redelivered=info.num_redelivered or 0,
        last_delivery=info.delivered.last_active if info.delivered else None,
    )


@router.get("/workers")
async def workers(resources: ResourcesDep) -> Workers:
    """The worker consumer's state: is a worker pulling, busy, or is there none."""
    name = resources.settings.worker_durable
    js = resources.nats.jetstream() if resources.nats is not None else None
    if js is None:
        return Workers(consumers=[WorkerConsumer(name=name, state="unknown")])
    try:
        async with asyncio.timeout(2):
            info = await js.consumer_info(STREAM_NAME, name)
            if consumer_state(info) == "none":
                await asyncio.sleep(SECOND_LOOK_S)
                info = await js.consumer_info(STREAM_NAME, name)
    except NotFoundError:
        return Workers(consumers=[WorkerConsumer(name=name, state="no_consumer")])
    except Exception:  # NATS unreachable or slow: say so rather than fail the page
        return Workers(consumers=[WorkerConsumer(name=name, state="unknown")])
    return Workers(consumers=[describe(name, info)])
