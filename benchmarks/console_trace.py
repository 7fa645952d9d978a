"""Where the context page's time goes between its data on screen and Playwright seeing it: a
Chromium trace (CDP Tracing, through Playwright's ``browser.start_tracing``) of each load,
the renderer's main thread split by what kept it busy.

console_load.py measures *data* (Playwright's raf-polled ``wait_for_function``, the target)
and *data in page* (a MutationObserver's next frame). On the context page the two were 100+
ms apart where other pages differ by 3-50 ms. This loads the page LOADS times with the
console's files cached (as console_load's *warm* column), marks both moments with
``performance.mark`` and reads, from the trace, each window's main-thread time by kind:

- ``playwright``: tasks that run a DevTools message (``blink.mojom.DevToolsSession``): its
  injected script and its polls;
- ``script``: the page's JavaScript (timers, rAF callbacks, promise jobs, fetch handling);
- ``style``, ``layout``, ``paint`` (pre-paint, paint, layerize, commit), ``gc``;
- ``other`` busy time, and ``idle`` (the main thread waiting: network, the server);

and the same split over the second after the data (the page's own work to finish: every row,
the titles) with the page's longest task in it, Playwright's own tasks apart.

Writes benchmarks/results/console_trace.{json,md}. Tracing slows the page (the renderer
writes every event): the split is the finding, not the absolute times.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/console_trace.py --loads 7 \\
        --baseline ../main/src   # a before/after, the servers taking turns load by load
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from benchmarks.console_load import pages, seed_context, served  # noqa: E402
from benchmarks.console_screenshots import VIEWPORT, chromium  # noqa: E402
from benchmarks.quality.server import source_state, write_report  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "console_trace"
CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "blink.user_timing",
    "v8.execute",
    "toplevel",
    "blink",
    "v8",
]
# console_load's SHOWN and OBSERVE, each leaving a performance.mark in the trace.
SHOWN = """(selector) => {
  const found = document.querySelector(selector);
  if (found) performance.mark("playwright-saw");
  return found && performance.now();
}"""
OBSERVE = """(selector) => {
  const observer = new MutationObserver(() => {
    if (!document.querySelector(selector)) return;
    observer.disconnect();
    performance.mark("data-matched");
    requestAnimationFrame(() => { performance.mark("data-in-page"); });
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true });
}"""
MARKS = ("data-matched", "data-in-page", "playwright-saw")
KINDS = ("gc", "layout", "style", "paint", "script", "playwright", "other", "idle")
# Trace event names by kind; where events nest, the first kind in KINDS wins.
NAMES = {
    "gc": {"MinorGC", "MajorGC", "V8.GCScavenger", "V8.GCFinalizeMC", "BlinkGC.AtomicPhase"},
    "layout": {"Layout"},
    "style": {"UpdateLayoutTree", "ParseAuthorStyleSheet"},
    "paint": {"PrePaint", "Paint", "Layerize", "Commit", "PaintImage", "UpdateLayer"},
    "script": {
        "FunctionCall", "RunMicrotasks", "EvaluateScript", "v8.compileModule",
        "v8.evaluateModule", "TimerFire", "FireAnimationFrame", "EventDispatch",
        "ResponseBodyLoader::DidFinishLoadingBody", "ParseHTML",
    },
}  # fmt: skip
TOP = {"ThreadControllerImpl::RunTask", "RunTask"}
STEP_US = 100  # the time grid the split is counted on
SECOND_US = 1_000_000  # the page's work after its data, counted over this long
MOJO = "Receive mojo message"


def devtools(event: dict[str, Any]) -> bool:
    info = event.get("args", {}).get("chrome_mojo_event_info", {})
    return bool(info.get("mojo_interface_tag") == "blink.mojom.DevToolsSession")


def split(events: list[dict[str, Any]], start: float, end: float) -> dict[str, float]:
    """Milliseconds of the main thread's time in [start, end) (trace µs) by kind."""
    steps = max(0, int((end - start) // STEP_US))
    grid = ["idle"] * steps
    rank = {kind: index for index, kind in enumerate(KINDS)}

    def paint(first: float, last: float, kind: str) -> None:
        lo = max(0, int((first - start) // STEP_US))
        hi = min(steps, int((last - start) // STEP_US) + 1)
        for step in range(lo, hi):
            if rank[kind] < rank[grid[step]]:
                grid[step] = kind

    for event in events:
        first, last = event["ts"], event["ts"] + event.get("dur", 0)
        if last <= start or first >= end:
            continue
        name = event["name"]
        if name in TOP:
            paint(first, last, "other")
        elif name == "Receive mojo message" and devtools(event):
            paint(first, last, "playwright")
        else:
            for kind, names in NAMES.items():
                if name in names:
                    paint(first, last, kind)
                    break
    return {kind: round(grid.count(kind) * STEP_US / 1000, 1) for kind in KINDS}


def analyse(trace: dict[str, Any] | list[dict[str, Any]]) -> dict[str, Any]:
    """The three moments (ms from the navigation's start) and each window's split."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    marks = {
        e["name"]: e
        for e in events
        if e.get("cat", "").startswith("blink.user_timing") and e.get("name") in MARKS
    }
    pid, tid = marks["data-matched"]["pid"], marks["data-matched"]["tid"]
    at = {name: marks[name]["ts"] for name in MARKS}
    origin = max(
        e["ts"]
        for e in events
        if e.get("name") == "navigationStart" and e["pid"] == pid and e["ts"] <= at[MARKS[0]]
    )
    main = [e for e in events if e["pid"] == pid and e["tid"] == tid and e.get("ph") == "X"]
    main.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    loaded = max(
        (e["ts"] for e in events if e.get("name") == "loadEventEnd" and e["pid"] == pid
         and origin < e["ts"]),
        default=origin,
    )  # fmt: skip
    seen = max(at["data-in-page"], at["playwright-saw"])
    # The frame that paints the data: its commit to the compositor ends it.
    painted = min(
        (e["ts"] + e.get("dur", 0) for e in main if e["name"] == "Commit"
         and e["ts"] > at["data-matched"]),
        default=None,
    )  # fmt: skip
    # Playwright's injected script (~330 KB) arrives with its first call into the page.
    injected = min(
        (e["ts"] for e in main if e["name"] == "Receive mojo message" and devtools(e)
         and e["args"]["chrome_mojo_event_info"].get("data_num_bytes", 0) > 100_000),
        default=None,
    )  # fmt: skip
    tasks, own, end = [], [], 0.0  # the outermost tasks only; own: not Playwright's
    after = at["data-matched"] + SECOND_US
    messages = [e["ts"] for e in main if e["name"] == MOJO and devtools(e)]  # sorted, as main
    for e in main:
        if e["name"] in TOP and e["ts"] >= end:
            end = e["ts"] + e.get("dur", 0)
            if at["data-matched"] <= e["ts"] < seen:
                tasks.append(round(e.get("dur", 0) / 1000, 1))
            theirs = bisect.bisect_left(messages, end) > bisect.bisect_left(messages, e["ts"])
            if at["data-matched"] <= e["ts"] < after and not theirs:
                own.append(round(e.get("dur", 0) / 1000, 1))

    def ms(ts: float) -> float:
        return round((ts - origin) / 1000, 1)

    return {
        "ms": {
            "load": ms(loaded),
            **{name: ms(ts) for name, ts in at.items()},
            "data-painted": None if painted is None else ms(painted),
            "playwright-injected": None if injected is None else ms(injected),
        },
        "load_to_data": split(main, loaded, at["data-matched"]),
        "data_to_playwright": split(main, at["data-matched"], seen),
        "long_tasks_after_data": sorted(tasks, reverse=True)[:5],
        # The page's own work once its data is in: every row, the titles, their frames.
        "second_after_data": split(main, at["data-matched"], after),
        "page_longest_task_after_data": max(own, default=0.0),
    }


async def traced(urls: dict[str, str], loads: int) -> dict[str, list[dict[str, Any]]]:
    """LOADS traced loads of the context page on each server (label: URL), taking turns."""
    route, ready = pages("")["context"]
    results: dict[str, list[dict[str, Any]]] = {label: [] for label in urls}
    async with chromium() as browser:
        contexts = {label: await browser.new_context(viewport=VIEWPORT) for label in urls}
        for turn in range(loads + 1):  # the first warms the cache
            order = list(urls.items())
            for label, url in order if turn % 2 == 0 else order[::-1]:
                page = await contexts[label].new_page()
                try:
                    await page.add_init_script(f"({OBSERVE})({ready!r})")
                    await browser.start_tracing(page=page, categories=CATEGORIES)
                    await page.goto(f"{url}/{route}", wait_until="load")
                    await page.wait_for_function(SHOWN, arg=ready, polling="raf")
                    await page.wait_for_function(
                        "() => performance.getEntriesByName('data-in-page').length",
                        polling="raf",
                    )
                    # Then the page's own work after it: every row, the titles.
                    await page.wait_for_selector(
                        "#dropped-table:not([aria-busy])", state="attached"
                    )  # no visibility check: it would lay the skipped table out
                    await page.wait_for_timeout(SECOND_US / 1000)
                    trace = json.loads(await browser.stop_tracing())
                finally:
                    await page.close()
                if turn:
                    results[label].append(analyse(trace))
                    print(label, results[label][-1], flush=True)
    return results


def medians(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 1) if values else None

    return {key: median([r[key] for r in rows if r[key] is not None]) for key in rows[0]}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {window: medians([r[window] for r in runs]) for window in (
        "ms", "load_to_data", "data_to_playwright", "second_after_data")} | {
        "page_longest_task_after_data": round(statistics.median(
            r["page_longest_task_after_data"] for r in runs), 1),
        "page_longest_task_after_data_max": max(
            r["page_longest_task_after_data"] for r in runs),
    }  # fmt: skip


def race(runs: list[dict[str, Any]]) -> list[str]:
    """Playwright's gap split by the race between its injected script and the page's data."""
    sides: dict[str, list[float]] = {"before": [], "after": []}
    for run in runs:
        moments = run["ms"]
        injected = moments["playwright-injected"]
        side = "before" if injected is not None and injected < moments["data-matched"] else "after"
        sides[side].append(moments["playwright-saw"] - moments["data-in-page"])
    return [
        f"injected {side} the data: {len(gaps)} loads, gap {round(statistics.median(gaps), 1)}"
        for side, gaps in sides.items()
        if gaps
    ]


def section(report: dict[str, Any], heading: str = "#") -> list[str]:
    """The trace's findings as markdown (console_load.md carries them too)."""
    labels = list(report["servers"])
    lines = [
        f"{heading} The context page, traced ({report['records']} records)",
        "",
        f"A Chromium trace (CDP Tracing) of {report['loads']} warm loads of the context page "
        f"per server, the servers taking turns: "
        + ", ".join(f"**{label}** (`{source}`)" for label, source in report["sources"].items())
        + f". Medians in ms from the navigation's start. Commit {report['commit']}; load "
        f"average {report['loadavg']}. Tracing slows the renderer: read the split and the "
        "order of the moments, not the totals (benchmarks/console_trace.py).",
        "",
        "| moment | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    moments = report["servers"][labels[0]]["ms"]
    for name in moments:
        cells = [str(report["servers"][label]["ms"][name]) for label in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "The renderer's main thread by kind of work in each window (ms, medians): "
        "*load_to_data* from the load event to the data in the DOM, *data_to_playwright* "
        "from there to Playwright's poll seeing it, *second_after_data* the second after the "
        "data is in the DOM (every row drawn, the titles; Playwright's own messages apart).",
        "",
        "| server | window | " + " | ".join(KINDS) + " |",
        "|---|---|" + "---:|" * len(KINDS),
    ]
    for label in labels:
        for window in ("load_to_data", "data_to_playwright", "second_after_data"):
            split_ms = report["servers"][label][window]
            lines.append(
                f"| {label} | {window} | " + " | ".join(str(split_ms[k]) for k in KINDS) + " |"
            )
    lines += ["", "The page's longest main-thread task in the second after its data (ms, median "
              "and max over the loads; Playwright's tasks apart): " + ", ".join(
        f"{label} {report['servers'][label].get('page_longest_task_after_data')} "
        f"(max {report['servers'][label].get('page_longest_task_after_data_max')})"
        for label in labels) + "."]  # fmt: skip
    lines += [
        "",
        "Playwright's gap (from the data in page to its poll seeing it) by whether its "
        "injected script reached the page before the data or after "
        "(loads, median gap in ms):",
        "",
    ]
    for label in labels:
        lines.append(f"- {label}: " + "; ".join(race(report["runs"][label])))
    lines += ["", "Longest main-thread tasks between the data and Playwright's poll (ms):", ""]
    for label in labels:
        lines.append(
            f"- {label}: "
            + "; ".join(", ".join(map(str, r["long_tasks_after_data"][:3])) or "none"
                        for r in report["runs"][label])
        )  # fmt: skip
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--cache", type=Path, default=REPO / ".cairn-bench", help="corpus cache")
    parser.add_argument("--unique-texts", type=int, default=10_000)
    parser.add_argument(
        "--baseline", type=Path, help="another checkout's src/ (e.g. main's), traced in turn"
    )
    parser.add_argument("--source", type=Path, default=REPO / "src", help="the src/ served")
    args = parser.parse_args()
    sources = {"this": str(args.source.resolve())}
    if args.baseline:
        sources["baseline"] = str(args.baseline.resolve())

    async def seeded(url: str) -> str:
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            return await seed_context(http)

    with served(args.scale, args.cache, args.unique_texts, sources) as (urls, records):
        asyncio.run(seeded(urls["this"]))
        runs = asyncio.run(traced(urls, args.loads))
    report = {
        "records": records,
        "loads": args.loads,
        "sources": sources,
        "servers": {label: summarise(taken) for label, taken in runs.items()},
        "runs": runs,
        "commit": source_state(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    write_report(OUT, report, "\n".join(section(report)))


if __name__ == "__main__":
    main()
