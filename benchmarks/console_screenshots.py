"""Screenshots of each console page, for the README and for review: starts `cairn up` on a
temporary embedded database, seeds a few records, an agent and a session whose question it
answers, and writes one PNG per page to benchmarks/results/console/ from the headless
Chromium the console's tests use.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/console_screenshots.py   # make screenshots
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Browser, Page, async_playwright

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.quality.server import cairn  # noqa: E402
from tests.browser import FLAGS, chromium_path  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "console"
AGENT = "kayak-helper"
SESSION = "trip-planning"
VIEWPORT = {"width": 1280, "height": 860}

NOTES = [
    ("Kayak repair", "Ivo repaired the red kayak's hull with epoxy and glass cloth in March."),
    ("Leak", "The red kayak still leaks a little near the stern after long paddles."),
    ("Paddles", "Two carbon paddles and one spare wooden paddle hang in the boathouse."),
    ("Weather rule", "Nobody paddles on the lake when the wind is above 25 km/h."),
    ("Cat", "Ivo's cat Miso sleeps in the boathouse on sunny afternoons."),
    ("Boathouse key", "The boathouse key is under the blue flower pot by the door."),
    (
        "Spring checklist",
        "Before the first trip of spring: check the hull for cracks, replace the bungee "
        "cords, wax the rails, test the rudder cable, and pack the repair kit with epoxy, "
        "cloth, tape, a knife and gloves. " * 4,
    ),
]


async def post(http: httpx.AsyncClient, **body: Any) -> str:
    response = await http.post("/breadcrumbs", json={"tags": [], "context": {}, **body})
    response.raise_for_status()
    return str(response.json()["id"])


async def seed_demo(http: httpx.AsyncClient) -> dict[str, str]:
    """An agent, notes in its session and a question: the worker assembles its context
    (a budget small enough that some notes are left out, so the page has both tables)."""
    await post(
        http, schema_name="agent.def.v1", title=AGENT, tags=["workspace:agents"],
        context={
            "agent_id": AGENT,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": ["ask"]},
            "context_sources": {
                "semantic": {"enabled": True, "limit": 10, "min_similarity": 0.1},
                "session": {"limit": 10},
            },
            "context_budget": 220,
        },
    )  # fmt: skip
    tags = ["ask", f"session:{SESSION}", "boats"]
    record = ""
    for title, text in NOTES:
        record = await post(
            http, schema_name="note.v1", title=title, tags=tags[1:], context={"text": text}
        )
    trigger = await post(
        http, schema_name="user.message.v1", title="Question", tags=tags,
        context={"content": "Is the red kayak ready for a trip this weekend?"},
    )  # fmt: skip
    await assembled(http, AGENT, SESSION, trigger)
    return {"record": record, "trigger": trigger}


async def assembled(http: httpx.AsyncClient, agent: str, session: str, trigger: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        response = await http.get(f"/contexts/{agent}", params={"session": session})
        if response.status_code == 200 and response.json()["context"]["trigger_id"] == trigger:
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"no context assembled for {agent} within 120 s")


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium_path()), args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def shoot(page: Page, url: str, ready: str, name: str) -> Path:
    await page.goto(url)
    await page.wait_for_selector(ready)
    await page.wait_for_load_state("networkidle")
    path = OUT / f"{name}.png"
    await page.screenshot(path=str(path), full_page=name != "live")
    return path


async def screenshots(url: str) -> list[Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        seeded = await seed_demo(http)
        async with chromium() as browser:
            page = await browser.new_page(viewport=VIEWPORT)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            written = [
                await shoot(page, f"{url}/#/records", "#records table", "records"),
                await shoot(page, f"{url}/#/records/{seeded['record']}", "#raw-context", "record"),
                await shoot(page, f"{url}/#/agents", "#agents table", "agents"),
                await shoot(page, f"{url}/#/agents/{AGENT}/{SESSION}", "#dropped-table", "context"),
                await shoot(page, f"{url}/#/health", "#readiness li", "health"),
            ]
            # The live view: open, then a few records arrive on it.
            await page.goto(f"{url}/#/live")
            await page.wait_for_selector("#live-status[data-state=live]")
            ids = [
                await post(http, schema_name="note.v1", title=t, context={"text": text})
                for t, text in NOTES[:5]
            ]
            await page.wait_for_selector(f"li[data-id='{ids[-1]}']", timeout=10_000)
            path = OUT / "live.png"
            await page.screenshot(path=str(path))
            written.append(path)
            if errors:
                raise RuntimeError(f"script errors on the pages: {errors}")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running Cairn to use (default: a fresh `cairn up`)")
    args = parser.parse_args()
    with cairn(args.url, "console-screenshots") as url:
        for path in asyncio.run(screenshots(url)):
            print(path.relative_to(REPO))


if __name__ == "__main__":
    main()
