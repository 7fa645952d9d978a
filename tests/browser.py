"""A real headless Chromium for the console's tests: Debian's ``chromium`` (``make test``
installs it; ``CAIRN_CHROMIUM`` points elsewhere) driven by Playwright, which is told the
binary's path instead of downloading a browser of its own."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, async_playwright

# The flags this machine's Chromium needs to start quietly with no network beyond loopback.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> Path:
    found = os.environ.get("CAIRN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return Path(found)


@dataclass
class Browsing:
    """A page, and every error its scripts logged or threw (a console test expects none)."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} at {message.location}")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    path = chromium_path()
    if not path.exists():
        pytest.fail(f"no Chromium at {path}: `make test` installs Debian's chromium (make browser)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(path), args=FLAGS)
        yield launched
        await launched.close()


@pytest.fixture
async def browsing(browser: Browser) -> AsyncIterator[Browsing]:
    """A fresh browser context (its own session storage) with one page."""
    context = await browser.new_context()
    page = await context.new_page()
    browsing = Browsing(page)
    page.on("console", browsing._console)
    page.on("pageerror", lambda error: browsing.errors.append(str(error)))
    yield browsing
    await context.close()
