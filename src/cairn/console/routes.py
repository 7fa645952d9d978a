"""Serving the console: the page at ``/`` and its assets under ``/console/``.

The page holds no data (everything comes from the API with the visitor's token), so these
routes need no authentication; a strict Content-Security-Policy keeps the page to its own
scripts and to this origin."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"
MOUNT = "/console"

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=HEADERS)


def install(app: FastAPI) -> None:
    """The page and its assets, on ``app``: outside the API's routers and its schema, so that
    the route gate test lists it among the routes served without a token."""
    app.add_api_route("/", index, methods=["GET"], include_in_schema=False)
    app.mount(MOUNT, StaticFiles(directory=STATIC), name="console")
