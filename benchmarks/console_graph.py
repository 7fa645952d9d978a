"""The console's Graph page at 500 records, in headless Chromium: how long until the graph is
drawn and settled, and how smooth it is to use (frames while the layout runs, wheel-zoom
latency, frames while dragging a node).

Loads the performance benchmark's corpus (benchmarks/perf.py builds and caches it) into a
fresh embedded PostgreSQL, serves it, finds a record whose neighbourhood (depth 3) fills the
route's 500 records, opens its graph page (200 records by default) and switches it to 500,
LOADS times, each on a new page with the console's files cached:

- ``fetch``: GET /graph?limit=500 (the route, as the page's fetch saw it);
- ``drawn``: from the switch to every record's circle on screen (the first frame after; a
  large graph is shown once mostly laid out);
- ``settled``: to the force layout's end (``svg.graph[data-settled]``);
- ``layout frames``: the frame intervals while the layout runs (p50, p95, max);
- ``drag frames``: the frame intervals while a node is dragged (the layout reheats);
- ``zoom``: from a wheel event to the frame that shows its zoom (10 wheel steps).

Writes benchmarks/results/console_graph.{json,md}.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/console_graph.py --loads 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from benchmarks.console_screenshots import VIEWPORT, chromium  # noqa: E402
from benchmarks.quality.server import source_state, write_report  # noqa: E402
from perfbench import corpus as corpus_module, load, server  # noqa: E402

from cairn.runtime import free_port  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "console_graph"
NODES = 500
DEPTH = 3

# In the page (functions, not strings: the CSP forbids eval). Frame intervals are recorded by
# requestAnimationFrame from the switch on; the circles are counted every frame.
SWITCH = """async ([nodes]) => {
  const frames = [];
  window.__frames = frames;
  let last = performance.now();
  const tick = (now) => {
    frames.push(now - last);
    last = now;
    if (!window.__stopFrames) requestAnimationFrame(tick);
  };
  window.__stopFrames = false;
  requestAnimationFrame(tick);
  const select = document.querySelector("select[name=limit]");
  const started = performance.now();
  select.value = String(nodes);
  select.dispatchEvent(new Event("change"));
  const drawn = await new Promise((resolve) => {
    const look = () => {
      const svg = document.querySelector("svg.graph");
      const shown = svg && !svg.classList.contains("laying-out");
      if (shown && svg.querySelectorAll("circle.node").length >= nodes) {
        requestAnimationFrame(() => resolve(performance.now() - started));
      } else requestAnimationFrame(look);
    };
    look();
  });
  const framesBefore = frames.length;
  const settled = await new Promise((resolve) => {
    const look = () => (document.querySelector("svg.graph[data-settled]")
      ? resolve(performance.now() - started) : requestAnimationFrame(look));
    look();
  });
  window.__stopFrames = true;
  const fetches = performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("/graph?") && e.name.includes(`limit=${nodes}`));
  const newest = fetches[fetches.length - 1];
  const fetch = newest ? newest.responseEnd - newest.startTime : 0;
  return { drawn, settled, fetch, layoutFrames: frames.slice(framesBefore),
    circles: document.querySelectorAll("svg.graph circle.node").length,
    edges: document.querySelectorAll("svg.graph line.edge").length };
}"""

WATCH_ZOOM = """() => {
  window.__zoom = [];
  const svg = document.querySelector("svg.graph");
  const layer = svg.querySelector("g.layer");
  let started = null;
  svg.addEventListener("wheel", () => { started = performance.now(); }, { capture: true });
  new MutationObserver(() => {
    if (started === null) return;
    const from = started;
    started = null;
    const shown = () => window.__zoom.push(performance.now() - from);
    requestAnimationFrame(() => requestAnimationFrame(shown));
  }).observe(layer, { attributes: true, attributeFilter: ["transform"] });
}"""

RECORD_FRAMES = """() => {
  window.__frames = [];
  window.__stopFrames = false;
  let last = performance.now();
  const tick = (now) => {
    window.__frames.push(now - last);
    last = now;
    if (!window.__stopFrames) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


async def start_record(http: httpx.AsyncClient) -> tuple[str, int, int]:
    """A record whose depth-3 neighbourhood fills ``NODES`` (else the fullest one found)."""
    best = ("", 0, 0)
    rows = (await http.get("/breadcrumbs", params={"limit": 40})).json()
    for row in rows:
        params = {"around": row["id"], "depth": DEPTH, "limit": NODES}
        graph = (await http.get("/graph", params=params)).json()
        found = (row["id"], len(graph["nodes"]), len(graph["edges"]))
        if found[1] > best[1]:
            best = found
        if found[1] >= NODES:
            break
    return best


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values) or [0.0]
    return {
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
        "max": round(ordered[-1], 1),
    }


async def one_load(page: Page, url: str, record: str, nodes: int) -> dict[str, Any]:
    await page.goto(f"{url}/#/graph/{record}")
    await page.wait_for_selector("select[name=limit]")
    await page.wait_for_selector("svg.graph[data-settled]", timeout=120_000)
    # The depth the route was asked for above: the page's own default is 2.
    await page.select_option("select[name=depth]", str(DEPTH))
    await page.wait_for_selector("svg.graph[data-settled]", timeout=120_000)
    switched = await page.evaluate(SWITCH, [nodes])
    node = page.locator("svg.graph circle.node").nth(nodes // 2)
    nbox = await node.bounding_box()
    assert nbox is not None
    await page.evaluate(RECORD_FRAMES)
    await page.mouse.move(nbox["x"] + nbox["width"] / 2, nbox["y"] + nbox["height"] / 2)
    await page.mouse.down()
    for step in range(30):
        await page.mouse.move(nbox["x"] + 4 * step, nbox["y"] + 2 * step)
        await page.wait_for_timeout(16)
    await page.mouse.up()
    drag = await page.evaluate("() => { window.__stopFrames = true; return window.__frames; }")
    box = await page.locator("svg.graph").bounding_box()
    assert box is not None
    await page.evaluate(WATCH_ZOOM)
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for step in range(10):  # in and out again, about the middle
        await page.mouse.wheel(0, -120 if step < 5 else 120)
        await page.wait_for_timeout(60)
    await page.wait_for_timeout(200)
    zoom = await page.evaluate("() => window.__zoom")
    return {**switched, "zoom": zoom, "dragFrames": drag}


async def run(url: str, loads: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        record, nodes, edges = await start_record(http)
    samples = []
    async with chromium() as browser:
        context = await browser.new_context(viewport=VIEWPORT)
        for attempt in range(loads + 1):  # the first warms the cache
            page = await context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error, seen=errors: seen.append(str(error)))
            try:
                sample = await one_load(page, url, record, nodes)
            finally:
                await page.close()
            if errors:
                raise RuntimeError(f"page errors: {errors}")
            print(attempt, {k: v for k, v in sample.items() if not isinstance(v, list)}, flush=True)
            if attempt:
                samples.append(sample)
    return {
        "record": record,
        "nodes": nodes,
        "edges_served": edges,
        "edges_drawn": samples[-1]["edges"],
        "fetch_ms": spread([s["fetch"] for s in samples]),
        "drawn_ms": spread([s["drawn"] for s in samples]),
        "settled_ms": spread([s["settled"] for s in samples]),
        "layout_frame_ms": spread([f for s in samples for f in s["layoutFrames"]]),
        "layout_frames": round(statistics.median(len(s["layoutFrames"]) for s in samples)),
        "zoom_ms": spread([z for s in samples for z in s["zoom"]]),
        "drag_frame_ms": spread([f for s in samples for f in s["dragFrames"]]),
    }


def report_text(report: dict[str, Any]) -> str:
    r, machine = report["result"], report["machine"]

    def row(name: str, key: str) -> str:
        v = r[key]
        return f"| {name} | {v['p50']} | {v['p95']} | {v['max']} |"

    return "\n".join([
        f"# The Graph page at {r['nodes']} records",
        "",
        f"Headless Chromium, {report['loads']} loads of the graph around one record of the "
        f"{report['records']}-record corpus (depth {DEPTH}: {r['nodes']} records, "
        f"{r['edges_drawn']} edges drawn), the console's files cached; ms from switching the "
        f"page from 200 to {r['nodes']} records. Commit {report['commit']}; {machine['cpus']} "
        f"CPUs, load average {machine['loadavg_before']} before and {machine['loadavg_after']} "
        "after (a shared machine).",
        "",
        "| measure | p50 | p95 | max |",
        "|---|---:|---:|---:|",
        row("GET /graph (fetch)", "fetch_ms"),
        row("every record drawn", "drawn_ms"),
        row("layout settled", "settled_ms"),
        row(f"frame interval, layout running ({r['layout_frames']} frames)", "layout_frame_ms"),
        row("wheel zoom to its frame", "zoom_ms"),
        row("frame interval while dragging a node", "drag_frame_ms"),
        "",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=REPO / ".cairn-bench", help="corpus cache")
    parser.add_argument("--unique-texts", type=int, default=10_000)
    parser.add_argument("--source", type=Path, default=REPO / "src", help="the src/ served")
    args = parser.parse_args()
    load_before = os.getloadavg()
    corpus = corpus_module.load_or_build(
        args.scale, args.cache, REPO / ".cairn" / "models", unique_texts=args.unique_texts
    )
    root = Path(tempfile.mkdtemp(prefix="cairn-console-graph-"))
    with load.services(root) as services:
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = server.environment(
            services.app_url, services.nats_url, root / "data", admin_url=services.database_url
        )
        env["PYTHONPATH"] = str(args.source.resolve())
        serve = server.start(["serve", "--port", str(port)], env, root / "serve.log")
        try:
            server.wait_ready(url, serve, root / "serve.log")
            result = asyncio.run(run(url, args.loads))
        finally:
            server.stop(serve)
    report = {
        "records": len(corpus.rows),
        "loads": args.loads,
        "result": result,
        "commit": source_state(),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    write_report(OUT, report, report_text(report))


if __name__ == "__main__":
    main()
