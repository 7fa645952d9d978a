"""A graph larger than the page shows while laying it out (graph.js keeps more than 150
records hidden until the layout has mostly settled): it still appears, every record on it,
and settles, with no script error."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from tests.browser import Browsing
from tests.factories import breadcrumb

from cairn.db.engine import tenant_session
from cairn.edges.repository import upsert_edges

RECORDS = 180  # above the page's 150: laid out hidden first
CAUSAL = 0
SHOWN = """(count) => {
  const svg = document.querySelector("svg.graph");
  if (!svg || !svg.hasAttribute("data-settled") || svg.classList.contains("laying-out")) {
    return false;
  }
  const layer = svg.querySelector("g.layer");
  return layer !== null && getComputedStyle(layer).visibility === "visible"
    && svg.querySelectorAll("circle.node").length >= count;
}"""


async def test_a_graph_of_180_records_is_shown_once_laid_out(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    bodies = [breadcrumb(title=f"star {n}", tags=[marker]) for n in range(RECORDS)]
    response = await client.post("/breadcrumbs/batch", json={"records": bodies})
    assert response.status_code == 200 and response.json()["created"] == RECORDS, response.text
    centre, *spokes = [uuid.UUID(r["id"]) for r in response.json()["results"]]
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, [(centre, spoke, CAUSAL, 1.0) for spoke in spokes])
    page = browsing.page
    await page.goto(f"{live_url}/#/graph/{centre}")
    await page.wait_for_selector("svg.graph")
    await page.select_option("select[name=depth]", "1")
    # The page may draw the graph again for the new depth: wait on whichever graph is on the
    # page now, until it is settled, shown and whole.
    await page.wait_for_function(SHOWN, arg=RECORDS, timeout=60_000)
    drawn = await page.eval_on_selector_all("circle.node", "els => els.map(e => e.dataset.id)")
    assert {str(record) for record in [centre, *spokes]} <= set(drawn)
    assert browsing.errors == []
