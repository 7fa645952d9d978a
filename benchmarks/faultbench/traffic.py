"""Scenarios about the server's long-run health: SSE churn and a soak of mixed traffic, both
with the processes' resident memory sampled from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
from collections import Counter
from urllib.parse import quote

from .common import Result, Run, now, rss_mb
from .contexts import contexts_into
from .load import Tally, TriggerLoad
from .observe import SseFollower, delivery_check

CHURN_CONCURRENCY = 8  # below the default per-caller cap (16): a 429 means a leaked slot


async def _abrupt_subscriber(host: str, port: int, target: str) -> str:
    """Open ``/events/stream``, wait for the ``connected`` comment, then reset the
    connection without a goodbye (what a killed client or a dropped network does)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = head.split(b" ", 2)[1].decode()
        if status == "200":
            seen = b""
            while b": connected" not in seen:
                seen += await asyncio.wait_for(reader.read(4096), 10) or b"?"
        return status
    except (TimeoutError, asyncio.IncompleteReadError, ConnectionError) as error:
        return type(error).__name__
    finally:
        writer.transport.abort()


async def _churn(run: Run, target: str, count: int, tag: str, tally: Tally) -> Counter[str]:
    """``count`` abrupt subscribers, a few at a time; an event posted every 20 of them."""
    host, port = "127.0.0.1", run.topology.port
    outcomes: Counter[str] = Counter()
    for start in range(0, count, CHURN_CONCURRENCY):
        batch = range(start, min(count, start + CHURN_CONCURRENCY))
        outcomes.update(
            await asyncio.gather(*(_abrupt_subscriber(host, port, target) for _ in batch))
        )
        if start % 20 < CHURN_CONCURRENCY:
            body = {"schema_name": "note.v1", "title": "churn", "tags": [tag], "context": {}}
            await tally.request(run.http, "POST", "/breadcrumbs", json=body)
    return outcomes


async def sse_churn(run: Run) -> Result:
    """Many SSE connections dropped abruptly: the server's memory must not grow, slots must
    be released (no 429 below the cap), and a steady subscriber must miss nothing."""
    d = run.durations
    result = Result("sse_churn", f"{d.sse_churn} abrupt SSE disconnects")
    tag = f"fault:{run.run_id}-churn"
    target = f"/events/stream?any_tags={quote(tag)}"
    follower = SseFollower(run.http, {"any_tags": tag})
    following = asyncio.create_task(follower.run())
    tally = Tally()
    pid = run.topology.serve.pid
    try:
        await asyncio.wait_for(follower.connected.wait(), 15)
        warm = await _churn(run, target, max(CHURN_CONCURRENCY, d.sse_churn // 10), tag, tally)
        baseline = rss_mb(pid)
        outcomes = warm + await _churn(run, target, d.sse_churn, tag, tally)
        after = rss_mb(pid)
        await asyncio.sleep(3)
        settled = rss_mb(pid)
        ids = await _posted_ids(run, tag)
        deadline = now() + d.assembly_wait_s
        while now() < deadline and not set(ids) <= set(follower.created_ids()):
            await asyncio.sleep(0.5)
    finally:
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following
    result.count(tally)
    result.operations += outcomes.total()
    result.acknowledged = outcomes["200"]
    result.http_5xx += sum(n for s, n in outcomes.items() if s.startswith("5"))
    result.unexpected_5xx += sum(n for s, n in outcomes.items() if s.startswith("5"))
    check = delivery_check(ids, follower.created_ids())
    result.lost, result.duplicated = check["lost"], check["duplicated"]
    rss = {"baseline": baseline, "after": after, "settled": settled}
    result.details |= {"outcomes": dict(outcomes), "rss_mb": rss, "steady_subscriber": check}
    result.notes.append(f"serve RSS {baseline} → {settled} MB ({settled - baseline:+.1f})")
    if outcomes["429"]:
        result.notes.append(f"{outcomes['429']} connections refused 429: slots leaked")
    return result


async def _posted_ids(run: Run, tag: str) -> list[str]:
    response = await run.http.get("/breadcrumbs", params={"tag": tag, "limit": 1000})
    return [item["id"] for item in response.json()] if response.status_code == 200 else []


async def _mixed_operation(run: Run, tally: Tally, ids: list[str], rng: random.Random) -> None:
    """One read or write a client might send, on the soak's own notes."""
    note = rng.choice(ids) if ids else None
    choice = rng.randrange(7)
    if choice == 0 or note is None:
        body = {"schema_name": "note.v1", "title": "soak", "tags": ["fault:soak"], "context": {}}
        response = await tally.request(run.http, "POST", "/breadcrumbs", json=body)
        if response is not None and response.status_code == 201:
            ids.append(response.json()["id"])
    elif choice == 1:
        await tally.request(run.http, "GET", f"/breadcrumbs/{note}")
    elif choice == 2:
        await tally.request(run.http, "GET", "/breadcrumbs", params={"tag": "fault:soak"})
    elif choice == 3:
        await tally.request(run.http, "GET", "/breadcrumbs/search", params={"q": "deploy step"})
    elif choice == 4:
        merge = {"context": {"step": rng.randrange(1000)}}
        await tally.request(run.http, "POST", f"/breadcrumbs/{note}/context/merge", json=merge)
    elif choice == 5:
        await tally.request(run.http, "GET", f"/breadcrumbs/{note}/history")
    else:
        ids.remove(note)
        await tally.request(run.http, "DELETE", f"/breadcrumbs/{note}")


async def _sample_rss(
    run: Run, every_s: float, samples: dict[str, list[tuple[float, float]]]
) -> None:
    started = now()
    while True:
        for process in [run.topology.serve, *run.topology.worker_processes]:
            samples.setdefault(process.name, []).append((now() - started, rss_mb(process.pid)))
        await asyncio.sleep(every_s)


def _trend_mb_per_min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of RSS over time, after the first fifth (warm-up)."""
    steady = points[len(points) // 5 :]
    if len(steady) < 3 or len({t for t, _ in steady}) < 2:
        return None
    slope = statistics.linear_regression([t for t, _ in steady], [m for _, m in steady]).slope
    return round(slope * 60, 2)


async def soak(run: Run) -> Result:
    """Mixed traffic for a while: triggers, reads, searches, merges, deletes, one SSE
    subscriber; no 5xx, every trigger assembled, and the memory trend of every process."""
    d = run.durations
    result = Result("soak", f"soak {d.soak_s:g} s of mixed traffic")
    tally, samples = Tally(), {}
    load = TriggerLoad(run.http, tally, f"{run.run_id}-soak", run.tags("soak"), d.rate / 2)
    follower = SseFollower(run.http, {"any_tags": run.tags("soak")[1]})
    background = [
        asyncio.create_task(follower.run()),
        asyncio.create_task(_sample_rss(run, d.rss_every_s, samples)),
    ]
    stop = asyncio.Event()
    posting = asyncio.create_task(load.run(stop))
    rng, notes, deadline = random.Random(14), [], now() + d.soak_s
    while now() < deadline:
        await _mixed_operation(run, tally, notes, rng)
        await asyncio.sleep(0.1)
    stop.set()
    await posting
    ids = [str(t.id) for t in load.acknowledged]
    wait_until = now() + d.assembly_wait_s
    while now() < wait_until and not set(ids) <= set(follower.created_ids()):
        await asyncio.sleep(0.5)
    for task in background:
        task.cancel()
    await asyncio.gather(*background, return_exceptions=True)
    result.count(tally)
    result.acknowledged = len(ids)
    check = delivery_check(ids, follower.created_ids())
    result.lost, result.duplicated = check["lost"], check["duplicated"]
    await contexts_into(result, run, run.agent_id, load.triggers, d.assembly_wait_s)
    trends = {name: _trend_mb_per_min(points) for name, points in samples.items()}
    result.details |= {"rss_mb": samples, "rss_trend_mb_per_min": trends, "sse": check}
    result.notes.append("RSS trend MB/min: " + ", ".join(f"{k} {v}" for k, v in trends.items()))
    return result
