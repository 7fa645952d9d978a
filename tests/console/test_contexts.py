"""The Agents page as a person uses it, in a real headless Chromium with a real worker: an
agent's trigger and sources are listed; its assembled context shows the text by section,
token bars within the budget, one waterfall bar per timed phase, and the explanation, where
a record that did not fit is on the dropped table with explain's reason; "Assemble again"
stores a new version."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
import pytest
from tests.browser import Browsing

SOURCES = {
    "semantic": {"enabled": True, "limit": 10, "min_similarity": 0.1},
    "session": {"limit": 5},
}
LONG = "The kayak leaks near the stern where the hull was patched last spring. " * 12


async def _post(client: httpx.AsyncClient, **body: Any) -> str:
    response = await client.post("/breadcrumbs", json={"tags": [], **body})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _agent(
    client: httpx.AsyncClient, agent_id: str, marker: str, sources: dict[str, Any], *, budget: int
) -> None:
    """An agent triggered by a user message tagged ``marker``."""
    await _post(
        client, schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [marker]},
            "context_sources": sources,
            "context_budget": budget,
        },
    )  # fmt: skip


async def _assembled(
    client: httpx.AsyncClient, agent_id: str, session: str, trigger: str
) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        response = await client.get(f"/contexts/{agent_id}", params={"session": session})
        if response.status_code == 200 and response.json()["context"]["trigger_id"] == trigger:
            assembled: dict[str, Any] = response.json()
            return assembled
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no context of {agent_id} for {trigger}")


@pytest.fixture
async def kayak(client: httpx.AsyncClient, worker: None, marker: str) -> dict[str, Any]:
    """An agent with a budget so small that the long note about the kayak cannot fit."""
    agent_id = f"reader-{marker[5:]}"
    session = f"s-{marker[5:]}"
    await _agent(client, agent_id, marker, SOURCES, budget=120)
    tags = [marker, f"session:{session}"]
    await _post(client, title="Repair", tags=tags, context={"t": "Ivo repaired the red kayak"})
    long = await _post(client, title=f"Leak {marker[5:]}", tags=tags, context={"t": LONG})
    trigger = await _post(
        client, schema_name="user.message.v1", title="Question", tags=tags,
        context={"content": "What is wrong with the kayak?"},
    )  # fmt: skip
    assembled = await _assembled(client, agent_id, session, trigger)
    return {
        "agent": agent_id, "session": session, "long": long, "title": f"Leak {marker[5:]}",
        "assembled": assembled,
    }  # fmt: skip


async def test_the_agents_page_lists_each_agent_with_its_trigger_and_sources(
    browsing: Browsing, live_url: str, kayak: dict[str, Any], marker: str
) -> None:
    page = browsing.page
    await page.goto(f"{live_url}/#/agents")
    link = await page.wait_for_selector(f"#agents a[href='#/agents/{kayak['agent']}']")
    row = await link.evaluate("a => a.closest('tr').innerText")
    assert marker in row and "user.message.v1" in row
    assert "semantic" in row and "session" in row and "120" in row
    await link.click()  # no session asked for: the newest context, here the only one
    facts = await (await page.wait_for_selector("#context-facts")).inner_text()
    assert kayak["session"] in facts
    assert browsing.errors == []


async def test_a_context_shows_why_a_record_is_not_in_it(
    browsing: Browsing, live_url: str, kayak: dict[str, Any]
) -> None:
    context = kayak["assembled"]["context"]
    dropped = {(d["record_id"], d["reason"]) for d in context["explain"]["dropped"]}
    assert (kayak["long"], "over_budget") in dropped  # the world is as the test needs
    page = browsing.page
    await page.goto(f"{live_url}/#/agents/{kayak['agent']}/{kayak['session']}")
    await page.wait_for_selector("#dropped-table:not([aria-busy])")  # every row is in
    rows = page.locator(f"#dropped-table tr[data-id='{kayak['long']}']")
    row = rows.filter(has_text="over_budget")  # a record may be left out at several stages
    assert await row.count() == 1
    assert "did not fit in the token budget" in await row.inner_text()

    await page.fill("#explain-filter", kayak["long"][:13])  # "why is X not in there?"
    visible = page.locator("#dropped-table tbody tr:visible, #selected-table tbody tr:visible")
    assert await visible.count() >= 1
    ids = await visible.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert set(ids) == {kayak["long"]}
    title = kayak["title"]
    await page.wait_for_selector(f"#dropped-table tr[data-id='{kayak['long']}'] :text('{title}')")
    await page.fill("#explain-filter", title.upper())  # or by its title, in any case
    ids = await visible.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert set(ids) == {kayak["long"]}

    for item in context["explain"]["selected"]:
        assert await page.locator(f"#selected-table tr[data-id='{item['record_id']}']").count()
    assert browsing.errors == []


async def test_token_bars_stay_within_the_budget_and_each_phase_has_a_bar(
    browsing: Browsing, live_url: str, kayak: dict[str, Any]
) -> None:
    context = kayak["assembled"]["context"]
    page = browsing.page
    await page.goto(f"{live_url}/#/agents/{kayak['agent']}/{kayak['session']}")
    await page.wait_for_selector("#token-bars .token-bar")
    tokens = await page.eval_on_selector_all(
        "#token-bars .token-bar", "bars => bars.map(b => Number(b.dataset.tokens))"
    )
    assert 0 < sum(tokens) <= context["token_budget"] == 120
    assert sum(tokens) == context["token_count"]
    widths = await page.eval_on_selector_all(
        "#token-bars .bar", "bars => bars.map(b => b.getBoundingClientRect().width)"
    )
    track = await page.eval_on_selector("#token-bars .bar-track", "t => t.clientWidth")
    assert sum(widths) <= track + 1

    phases = [name for name in context["timings_ms"] if name != "total"]
    shown = await page.eval_on_selector_all(
        "#waterfall .phase", "rows => rows.map(r => r.dataset.phase)"
    )
    assert sorted(shown) == sorted(phases)
    lefts = await page.eval_on_selector_all(
        "#waterfall .bar", "bars => bars.map(b => b.getBoundingClientRect().left)"
    )
    assert lefts == sorted(lefts) and lefts[-1] > lefts[0]  # each starts where the last ended

    sections = await page.eval_on_selector_all(
        "#formatted .context-section", "s => s.map(n => n.dataset.section)"
    )
    assert {item["section"] for item in context["explain"]["selected"]} <= set(sections)
    assert browsing.errors == []


async def test_assemble_again_stores_a_new_version(
    browsing: Browsing, live_url: str, kayak: dict[str, Any]
) -> None:
    version = kayak["assembled"]["version"]
    page = browsing.page
    await page.goto(f"{live_url}/#/agents/{kayak['agent']}/{kayak['session']}")
    await page.wait_for_selector(f"#context-facts[data-version='{version}']")
    await page.click("#assemble-again")
    await page.wait_for_selector(f"#context-facts[data-version='{version + 1}']")
    assert browsing.errors == []


async def test_an_agent_without_a_context_says_so(browsing: Browsing, live_url: str) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:8]}"
    await browsing.page.goto(f"{live_url}/#/agents/{nobody}")
    await browsing.page.wait_for_selector(f"#context:has-text('no context assembled for {nobody}')")
    assert browsing.errors == []
    await browsing.page.goto(f"{live_url}/#/agents/{nobody}/some-session")
    alert = await browsing.page.wait_for_selector("#context [role=alert]")
    assert "404" in await alert.inner_text()
