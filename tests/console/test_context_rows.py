"""A context with many dropped candidates, as a person opens it: the frame that brings the
explanation on screen holds the selected table and the dropped candidates' counts by reason;
the dropped rows follow after it, every candidate explain lists with its row and title."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.browser import Browsing
from tests.console.test_contexts import _agent, _assembled, _post

TITLES_AT_ONCE = 100  # contexts.js: the dropped records whose titles the page asks for
# When the dropped table first appears, how many rows it has and the counts line above it
# (noted in the page itself: by the time Playwright looks, the rows may be in).
FIRST_SEEN = """() => {
  window.__firstRows = null;
  const observer = new MutationObserver(() => {
    const table = document.querySelector("#dropped-table");
    if (!table) return;
    observer.disconnect();
    window.__firstRows = table.querySelectorAll("tbody tr").length;
    window.__firstBusy = table.getAttribute("aria-busy");
    window.__firstCounts = document.querySelector("#dropped-counts")?.textContent;
  });
  observer.observe(document, { subtree: true, childList: true });
}"""


@pytest.fixture
async def crowded(client: httpx.AsyncClient, worker: None, marker: str) -> dict[str, Any]:
    """An agent whose budget takes a few of the many notes its semantic source finds."""
    agent_id = f"crowd-{marker[5:]}"
    session = f"s-{marker[5:]}"
    semantic = {"semantic": {"enabled": True, "limit": 80, "min_similarity": 0}}
    await _agent(client, agent_id, marker, semantic, budget=60)
    notes = set()
    for n in range(70):
        text = f"Paddle note {n}: the kayak's paddle number {n} is cracked."
        notes.add(
            await _post(
                client, title=f"Paddle note {n}", tags=[f"{marker}-note"], context={"t": text}
            )
        )
    trigger = await _post(
        client, schema_name="user.message.v1", title="Question",
        tags=[marker, f"session:{session}"], context={"content": "Which paddle is cracked?"},
    )  # fmt: skip
    return {"agent": agent_id, "session": session, "notes": notes, "assembled": await _assembled(
        client, agent_id, session, trigger)}  # fmt: skip


async def test_the_dropped_rows_come_after_the_first_frame_and_all_arrive(
    browsing: Browsing, live_url: str, crowded: dict[str, Any]
) -> None:
    explain = crowded["assembled"]["context"]["explain"]
    dropped = explain["dropped"]
    assert len(dropped) > 30  # the world is as the test needs: many dropped
    page = browsing.page
    await page.add_init_script(f"({FIRST_SEEN})()")
    await page.goto(f"{live_url}/#/agents/{crowded['agent']}/{crowded['session']}")
    await page.wait_for_selector("#dropped-table:not([aria-busy])")
    assert await page.evaluate("window.__firstRows") == 0
    assert await page.evaluate("window.__firstBusy") == "true"
    reasons: dict[str, int] = {}
    for item in dropped:
        reasons[item["reason"]] = reasons.get(item["reason"], 0) + 1
    shown = await page.evaluate("window.__firstCounts")
    assert sorted(shown.split(" · ")) == sorted(f"{n} {reason}" for reason, n in reasons.items())
    ids = await page.eval_on_selector_all(
        "#dropped-table tbody tr", "rows => rows.map(r => r.dataset.id)"
    )
    assert ids == [item["record_id"] for item in dropped]  # every one, in explain's order
    selected = await page.eval_on_selector_all(
        "#selected-table tbody tr", "rows => rows.map(r => r.dataset.id)"
    )
    assert selected == [item["record_id"] for item in explain["selected"]]
    # Titles reach the rows: the last of this test's notes among the records the page names
    # (the tenant holds other tests' records, which may be untitled or deleted by now).
    named = list(dict.fromkeys(item["record_id"] for item in dropped))[:TITLES_AT_ONCE]
    late = [i for i in named if i in crowded["notes"]]
    assert late, "no note of this test among the rows the page names"
    last = late[-1]
    title = await page.wait_for_selector(f"#dropped-table tr[data-id='{last}'] .short-id")
    assert last.startswith((await title.inner_text()).strip())
    # The filter finds a row drawn after the first frame, and hides the others.
    await page.fill("#explain-filter", last)
    visible = page.locator("#dropped-table tbody tr:visible")
    assert await visible.evaluate_all("rows => rows.map(r => r.dataset.id)") == [last]
    assert browsing.errors == []
