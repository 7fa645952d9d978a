"""The Health page as an operator reads it: readiness, and whether a worker consumes the event
stream (GET /workers, from the workers' JetStream consumer), with the session's real worker."""

from __future__ import annotations

import datetime as dt

import httpx
from nats.js.api import ConsumerConfig, ConsumerInfo, SequenceInfo
from tests.browser import Browsing
from tests.waiting import eventually

from cairn.api.workers import consumer_state, describe


def _info(*, waiting: int, in_progress: int) -> ConsumerInfo:
    return ConsumerInfo(
        name="cairn-worker",
        stream_name="BREADCRUMBS",
        config=ConsumerConfig(),
        created=dt.datetime.now(dt.UTC),
        delivered=SequenceInfo(consumer_seq=3, stream_seq=9, last_active=None),
        num_ack_pending=in_progress,
        num_waiting=waiting,
        num_pending=4,
    )


def test_a_consumer_with_no_pull_and_nothing_in_hand_has_no_worker() -> None:
    assert consumer_state(_info(waiting=0, in_progress=0)) == "none"
    assert consumer_state(_info(waiting=1, in_progress=0)) == "pulling"
    assert consumer_state(_info(waiting=0, in_progress=2)) == "busy"
    described = describe("cairn-worker", _info(waiting=0, in_progress=2))
    assert (described.in_progress, described.pending, described.waiting_pulls) == (2, 4, 0)


async def test_workers_reports_the_running_worker(client: httpx.AsyncClient, worker: None) -> None:
    seen: list[dict[str, object]] = []

    async def consuming() -> bool:
        response = await client.get("/workers")
        assert response.status_code == 200, response.text
        seen[:] = response.json()["consumers"]
        return seen[0]["state"] in {"pulling", "busy"}

    await eventually(consuming, timeout=10)
    assert [c["name"] for c in seen] == ["cairn-worker"]


async def test_the_health_page_shows_the_worker_pulling(
    browsing: Browsing, live_url: str, worker: None
) -> None:
    page = browsing.page
    await page.goto(f"{live_url}/#/health")
    await page.wait_for_selector("#readiness li")
    line = await page.wait_for_selector(
        "#workers li[data-state=pulling], #workers li[data-state=busy]", timeout=15000
    )
    assert line is not None and "cairn-worker" in (await line.text_content() or "")
    assert await page.locator("#readiness li.ok").count() == 2  # database and NATS
    assert browsing.errors == []


async def test_coverage_is_asked_once_the_quick_panels_are_drawn(
    browsing: Browsing, live_url: str
) -> None:
    """/coverage (every record counted by stage) must not take the CPU the quick answers
    need: it is sent after they arrived, and its panel is drawn all the same."""
    page = browsing.page
    await page.goto(f"{live_url}/#/health")
    processing = page.locator("section.panel", has_text="Processing")
    await processing.locator("table").wait_for()
    assert "records" in await processing.inner_text()
    timing = await page.evaluate(
        """() => Object.fromEntries(performance.getEntriesByType('resource')
          .filter((e) => e.initiatorType === 'fetch')
          .map((e) => [new URL(e.name).pathname, [e.startTime, e.responseEnd]]))"""
    )
    quick = ["/ready", "/workers", "/metrics", "/assemblies/stats"]
    assert set(quick) | {"/coverage"} <= set(timing)
    assert timing["/coverage"][0] >= max(timing[path][1] for path in quick)
    assert browsing.errors == []
