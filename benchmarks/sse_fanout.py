"""The server's own fan-out of one event to N SSE connections, in process: the loop's CPU
per connection per event and the time from the dispatch to the last connection's send.

    .venv/bin/python benchmarks/sse_fanout.py [--connections 200] [--events 2000] \\
        [--chain app|bare]

No sockets, no NATS: N connections are served by ``stream.response.event_stream`` through
an ASGI app with Cairn's middleware stack (``--chain app``: FastAPI's route wrapper, the
error boundary, the body limit, the request metrics, Starlette's error middleware and,
where the tree has it, ``stream.asgi.ServerSend``), the same without some of them
(``app-no-skip``: body chunks through every layer; ``no-metrics``, ``no-boundary``,
``no-both``), or straight (``--chain bare``), to a ``send`` that only counts. Events go through
``Fanout.dispatch`` one at a time; each is done when all N sends returned. What this leaves
out (the socket write, the client) is the same for any variant of the fan-out, so variants
compare here without the machine's noise. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import uvloop
from fastapi import FastAPI

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cairn.api.errors import install_error_handlers  # noqa: E402
from cairn.api.middleware import BodySizeLimit, RequestMetrics  # noqa: E402
from cairn.events.selectors import Selector  # noqa: E402
from cairn.stream.feed import Fanout  # noqa: E402
from cairn.stream.response import event_stream  # noqa: E402
from cairn.stream.sse import SseConnection  # noqa: E402

try:  # (absent from the trees before body chunks skipped the middleware)
    from cairn.stream.asgi import ServerSend
except ImportError:
    ServerSend = None  # type: ignore[assignment,misc]

SCOPE = {
    "type": "http",
    "asgi": {"version": "3.0", "spec_version": "2.3"},
    "http_version": "1.1",
    "method": "GET",
    "scheme": "http",
    "path": "/events/stream",
    "raw_path": b"/events/stream",
    "root_path": "",
    "query_string": b"",
    "headers": [],
    "client": ("127.0.0.1", 1),
    "server": ("127.0.0.1", 2),
}


class Counter:
    def __init__(self) -> None:
        self.sent = 0
        self.last = 0.0

    async def send(self, message: Any) -> None:
        if message.get("more_body"):
            self.sent += 1
            self.last = time.perf_counter()


async def _never() -> dict[str, Any]:
    await asyncio.Event().wait()
    raise AssertionError


# What each ``--chain`` leaves out of Cairn's stack (``api.app``): every layer that wraps
# ``send`` is a call per connection per event.
CHAINS = {
    "app": set(),
    "app-no-skip": {"skip"},
    "no-metrics": {"metrics"},
    "no-boundary": {"boundary"},
    "no-both": {"metrics", "boundary"},
}


def app_for(connections: list[SseConnection], without: set[str]) -> FastAPI:
    """Cairn's middleware stack around a route that serves the next connection."""
    app = FastAPI()
    if "boundary" not in without:
        install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=1 << 20)
    if "metrics" not in without:
        app.add_middleware(RequestMetrics)
    if "skip" not in without and ServerSend is not None:
        app.add_middleware(ServerSend)
    waiting = iter(connections)

    @app.get("/events/stream")
    async def stream() -> Any:
        return event_stream(next(waiting), 60.0)

    return app


async def run(connections: int, events: int, chain: str) -> dict[str, Any]:
    feed, owner = Fanout(), uuid.uuid4()
    served = [SseConnection(feed, Selector(), owner, queue_size=1000) for _ in range(connections)]
    counter = Counter()
    app = app_for(served, CHAINS.get(chain, set()))
    tasks = []
    for connection in served:
        scope = {**SCOPE, "app": app}
        if chain == "bare":
            serving = event_stream(connection, 60.0)(scope, _never, counter.send)
        else:
            serving = app(scope, _never, counter.send)
        tasks.append(asyncio.create_task(serving))
    while feed.listeners < connections or counter.sent < connections:  # CONNECTED everywhere
        await asyncio.sleep(0.001)
    data = json.dumps({"owner_id": str(owner), "tags": [], "type": "breadcrumb.updated"})
    latencies: list[float] = []
    expected = counter.sent
    cpu = time.process_time()
    for seq in range(1, events + 1):
        expected += connections
        started = time.perf_counter()
        feed.dispatch(seq, data.encode())
        while counter.sent < expected:
            await asyncio.sleep(0)
        latencies.append(counter.last - started)
    cpu = time.process_time() - cpu
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies.sort()
    return {
        "chain": chain,
        "connections": connections,
        "events": events,
        "cpu_us_per_delivery": round(cpu / (events * connections) * 1e6, 3),
        "fanout_p50_us": round(statistics.median(latencies) * 1e6, 1),
        "fanout_p99_us": round(latencies[int(0.99 * len(latencies))] * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--chain", choices=[*CHAINS, "bare"], default="app")
    args = parser.parse_args()
    print(json.dumps(uvloop.run(run(args.connections, args.events, args.chain))))


if __name__ == "__main__":
    main()
