"""Event latency (commit → SSE client) with 1, 50 and 200 subscribers, and relay throughput.

    .venv/bin/python benchmarks/events.py [--events 200] [--subscribers 1 50 200]

Latency: a real `cairn up` in a fresh data directory; N SSE clients subscribe; breadcrumbs
are posted one at a time and each client records when it has parsed the event's frame. The
clock starts when the first bytes of the POST response are read — the transaction committed
before the response was sent, so the true commit → SSE latency is at most that much larger
(loopback, < 1 ms). The clients are bare asyncio connections, so that with 200 of them in
this process the client's own work stays small next to what is measured.

Relay throughput: outbox rows inserted straight into a fresh database, then one relay
publishes them to JetStream; the rate is rows published per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

import asyncpg
import httptools
import httpx
import uvloop

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.processes import start_cairn_up, stop  # noqa: E402

from cairn.config import EventSettings, Settings  # noqa: E402
from cairn.db.engine import create_engine  # noqa: E402
from cairn.db.migrate import upgrade  # noqa: E402
from cairn.events.broker import JetStreamBroker  # noqa: E402
from cairn.events.relay import OutboxRelay  # noqa: E402
from cairn.events.stream_setup import ensure_stream  # noqa: E402
from cairn.runtime import EmbeddedNats, EmbeddedPostgres, free_port  # noqa: E402


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "p50": at(0.5),
        "p95": at(0.95),
        "p99": at(0.99),
        "mean": round(statistics.mean(ordered) * 1000, 2),
    }


class HttpConnection(asyncio.Protocol):
    """A bare HTTP/1.1 client connection (asyncio + httptools). With 200 SSE clients in this
    one process, httpx's per-chunk work (anyio receive, h11, line decoding; ~0.1 ms a frame)
    was most of what the benchmark measured, and its POST returned late, behind that work."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (uvloop's transports do not subclass asyncio's)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(exc)

    def on_message_begin(self) -> None:
        pass

    def on_body(self, body: bytes) -> None:
        pass

    def on_message_complete(self) -> None:
        pass


class Subscriber(HttpConnection):
    """One SSE client. An event counts as arrived when the bytes that complete its frame were
    read. Once connected (``deferred``), the client only keeps what it reads, with the time,
    and parses it after the round (``settle``): parsing each frame as it came (HTTP chunks,
    frames, JSON: 20-40 µs) made the 200th subscriber wait for 199 parses in this one process,
    4-8 ms of the client's own work counted as the server's latency."""

    def __init__(
        self, arrivals: dict[str, list[float]], ready: asyncio.Event, *, deferred: bool = True
    ) -> None:
        super().__init__()
        self.arrivals = arrivals
        self.ready = ready
        self.deferred = deferred
        self.pending = b""
        self.read: list[tuple[float, bytes]] = []
        self.now = 0.0

    def data_received(self, data: bytes) -> None:
        if self.deferred and self.ready.is_set():
            self.read.append((time.perf_counter(), data))
            return
        self.now = time.perf_counter()
        super().data_received(data)

    def settle(self) -> None:
        """Parse what was read since the last call, each frame at the time its end came."""
        read, self.read = self.read, []
        for self.now, data in read:
            self.parser.feed_data(data)

    def on_headers_complete(self) -> None:
        if self.parser.get_status_code() != 200:
            raise RuntimeError(f"/events/stream answered {self.parser.get_status_code()}")

    def on_body(self, body: bytes) -> None:
        """The de-chunked stream: frames end with a blank line."""
        *frames, self.pending = (self.pending + body).split(b"\n\n")
        for frame in frames:
            for line in frame.split(b"\n"):
                if line.startswith(b": connected"):
                    self.ready.set()
                elif line.startswith(b"data: "):
                    event = json.loads(line[6:])
                    if "breadcrumb_id" in event:
                        self.arrivals.setdefault(event["breadcrumb_id"], []).append(self.now)


class Poster(HttpConnection):
    """POSTs one request at a time on a keep-alive connection. A response counts as received
    when its first bytes are read, before it is parsed."""

    def __init__(self) -> None:
        super().__init__()
        self.response: asyncio.Future[tuple[float, bytes]] | None = None
        self.received_at = 0.0
        self.body = b""

    def data_received(self, data: bytes) -> None:
        if not self.received_at:
            self.received_at = time.perf_counter()
        super().data_received(data)

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        status = self.parser.get_status_code()
        assert self.response is not None
        if status != 201:
            self.response.set_exception(RuntimeError(f"POST answered {status}: {self.body!r}"))
        else:
            self.response.set_result((self.received_at, self.body))

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.response is not None and not self.response.done():
            self.response.set_exception(exc or ConnectionError("the server closed the connection"))

    async def post(self, request: bytes) -> tuple[float, bytes]:
        """(when the response began to arrive, its body)"""
        assert self.transport is not None
        self.response = asyncio.get_running_loop().create_future()
        self.received_at, self.body = 0.0, b""
        self.parser = httptools.HttpResponseParser(self)
        self.transport.write(request)
        return await asyncio.wait_for(self.response, 30)


P = TypeVar("P", bound=HttpConnection)


def request_bytes(method: str, url: httpx.URL, body: bytes = b"") -> bytes:
    head = f"{method} {url.raw_path.decode()} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


async def connect(url: httpx.URL, protocol: Callable[[], P]) -> P:
    loop = asyncio.get_running_loop()
    transport, connection = await loop.create_connection(protocol, url.host, url.port or 80)
    # uvloop calls ``connection_made`` on the loop's next turn, after this returns.
    connection.transport = cast(asyncio.Transport, transport)
    return connection


async def subscriber(
    url: str,
    tag: str,
    arrivals: dict[str, list[float]],
    ready: asyncio.Event,
    connections: list[Subscriber] | None = None,
    *,
    deferred: bool = True,
) -> None:
    stream = httpx.URL(url).join("/events/stream").copy_merge_params({"any_tags": tag})
    connection = await connect(stream, lambda: Subscriber(arrivals, ready, deferred=deferred))
    if connections is not None:
        connections.append(connection)
    assert connection.transport is not None
    try:
        connection.transport.write(request_bytes("GET", stream))
        raise await connection.closed or ConnectionError("the event stream ended")
    finally:
        connection.transport.close()


# After the last POST, the subscribers parse nothing for this long: every frame not badly
# late has been read (and timed) by then, and parsing cannot delay reading one that is.
SETTLE_AFTER_S = 0.5


async def latency_round(
    url: str, subscribers: int, events: int, *, gap_s: float = 0.005, deferred: bool = True
) -> dict[str, object]:
    """``events`` records posted one at a time (``gap_s`` after each answer), each timed from
    its POST's answer to its frame at every one of ``subscribers``. Besides the percentiles:
    until an event's first frame reached any subscriber (commit → relay → NATS → the
    server's feed → one connection), and from there to its last (the fan-out to every
    connection). ``deferred``: the clients parse after the round (see ``Subscriber``)."""
    tag = f"bench:{uuid.uuid4().hex[:8]}"
    arrivals: dict[str, list[float]] = {}
    readies = [asyncio.Event() for _ in range(subscribers)]
    connections: list[Subscriber] = []
    tasks = [
        asyncio.create_task(subscriber(url, tag, arrivals, r, connections, deferred=deferred))
        for r in readies
    ]
    connected: asyncio.Future[object] = asyncio.ensure_future(
        asyncio.gather(*(r.wait() for r in readies))
    )
    await asyncio.wait([connected, *tasks], timeout=60, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        if task.done():
            task.result()  # a subscriber that failed: its error
    if not connected.done():
        raise TimeoutError("the subscribers did not connect within 60 s")
    committed: dict[str, float] = {}
    cpu_before = time.process_time()
    breadcrumbs = httpx.URL(url).join("/breadcrumbs")
    poster = await connect(breadcrumbs, Poster)
    for i in range(events):
        body = {"schema_name": "note.v1", "title": f"e{i}", "tags": [tag], "context": {"i": i}}
        received, answer = await poster.post(
            request_bytes("POST", breadcrumbs, json.dumps(body).encode())
        )
        committed[json.loads(answer)["id"]] = received
        await asyncio.sleep(gap_s)
    assert poster.transport is not None
    poster.transport.close()
    deadline = time.monotonic() + 30
    await asyncio.sleep(SETTLE_AFTER_S)
    # The client's own CPU while it posted and read (not its parsing after the round): on
    # two cores, what it takes is not the server's.
    client_cpu = time.process_time() - cpu_before
    while True:
        for connection in connections:
            connection.settle()
        if sum(map(len, arrivals.values())) >= events * subscribers:
            break
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    samples = [t - committed[i] for i, times in arrivals.items() if i in committed for t in times]
    mine = [times for i, times in arrivals.items() if i in committed]
    first = [min(times) - committed[i] for i, times in arrivals.items() if i in committed]
    return {
        "subscribers": subscribers,
        "events": events,
        "received": len(samples),
        **percentiles(samples),
        "first_frame": percentiles(first),
        "fanout": percentiles([max(times) - min(times) for times in mine]),
        "client_cpu_us_per_delivery": round(client_cpu * 1e6 / max(1, len(samples)), 1),
    }


def run_round(
    url: str, subscribers: int, events: int, *, gap_s: float = 0.005, deferred: bool = True
) -> dict[str, object]:
    """``latency_round`` on an event loop of its own, uvloop's: with the standard loop, the
    200 clients' reading took 20 µs of this process's CPU per delivery against 13-14 (every
    frame of every client, ~4 ms an event, on the two cores the server has too)."""
    return uvloop.run(latency_round(url, subscribers, events, gap_s=gap_s, deferred=deferred))


async def relay_throughput(rows: int) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix="cairn-relay-bench-"))
    postgres, nats_server = EmbeddedPostgres(root / "pg"), EmbeddedNats(root / "nats")
    try:
        url, nats_url = postgres.start(), nats_server.start()
        engine = create_engine(url, Settings())
        await upgrade(engine)
        await engine.dispose()
        connection = await asyncpg.connect(postgres.dsn)
        payload = json.dumps({"type": "breadcrumb.created", "context": {"text": "x" * 200}})
        owner = uuid.uuid4()
        await connection.copy_records_to_table(
            "outbox",
            records=[
                (owner, f"bc.{uuid.uuid4()}.created", uuid.uuid4(), payload) for _ in range(rows)
            ],
            columns=["owner_id", "subject", "msg_id", "payload"],
        )
        import nats

        client = await nats.connect(nats_url)
        js = client.jetstream()
        settings = EventSettings()
        await ensure_stream(js, settings)
        relay = OutboxRelay(postgres.dsn, lambda: JetStreamBroker(js, settings), settings)
        started = time.perf_counter()
        while await relay.relay_batch(connection):
            pass
        elapsed = time.perf_counter() - started
        await client.close()
        await connection.close()
        return {"rows": rows, "seconds": round(elapsed, 2), "events_per_s": round(rows / elapsed)}
    finally:
        nats_server.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 50, 200])
    parser.add_argument("--relay-rows", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/events.json")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="cairn-events-bench-"))
    port = free_port()
    os.environ.setdefault("CAIRN_LOG_LEVEL", "WARNING")
    # Every subscriber here is the same (anonymous) caller: lift the per-caller SSE cap.
    os.environ.setdefault("CAIRN_LIMITS__MAX_SSE_PER_CALLER", "0")
    server = start_cairn_up(data_dir, port, REPO / ".cairn" / "models")
    try:
        url = f"http://127.0.0.1:{port}"
        rounds = [run_round(url, n, args.events) for n in args.subscribers]
    finally:
        stop(server, signal.SIGINT)
        shutil.rmtree(data_dir, ignore_errors=True)
    report = {
        "latency_ms": rounds,
        "relay": asyncio.run(relay_throughput(args.relay_rows)),
        "machine": {"cpus": os.cpu_count()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
