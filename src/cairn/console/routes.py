"""Serving the console: the page at ``/`` and its assets under ``/console/``.

The page holds no data (everything comes from the API with the visitor's token), so these
routes need no authentication; a strict Content-Security-Policy keeps the page to its own
scripts and to this origin.

The assets are served under a versioned prefix, ``/console/<hash of the files>/``, cached by
the browser for a year without asking again: the page itself is never cached (``no-cache``)
and names the prefix of the files it came with, so a new release is loaded at once and an
unchanged one costs no request. ``/console/`` without the version still serves the same
files, revalidated every time, for links written by hand."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

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
IMMUTABLE = "public, max-age=31536000, immutable"


class _ImmutableFiles(StaticFiles):
    """Files whose URL changes with their content: the browser may keep them for good."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = IMMUTABLE
        return response


class _RevalidatedFiles(StaticFiles):
    """The same files at an unversioned URL: checked with the server (ETag) on every use."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


def version(directory: Path = STATIC) -> str:
    """A digest of every asset's path and bytes: it changes whenever any file does."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(path.relative_to(directory).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def page(prefix: str) -> str:
    """index.html with its asset URLs under ``prefix`` (the versioned mount); the modules'
    relative imports then resolve under it too."""
    return (STATIC / "index.html").read_text().replace(f'"{MOUNT}/', f'"{prefix}/')


def install(app: FastAPI) -> None:
    """The page and its assets, on ``app``: outside the API's routers and its schema, so that
    the route gate test lists it among the routes served without a token. The versioned
    mount comes first: the plain one would otherwise take its paths."""
    prefix = f"{MOUNT}/{version()}"
    body = page(prefix)

    async def index() -> HTMLResponse:
        return HTMLResponse(body, headers=HEADERS)

    app.add_api_route("/", index, methods=["GET"], include_in_schema=False)
    app.mount(prefix, _ImmutableFiles(directory=STATIC), name="console-versioned")
    app.mount(MOUNT, _RevalidatedFiles(directory=STATIC), name="console")
