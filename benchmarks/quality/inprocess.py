"""An in-process Cairn on fresh embedded PostgreSQL and NATS whose shutdown cannot stall a
benchmark: the app's shutdown gets ``SHUTDOWN_S``, then the servers are stopped anyway.

(The webhook consumer's cancellation can hang in nats-py's ``next_msg`` under Python 3.11's
``wait_for``; a benchmark that has its numbers should not wait on it. ``asyncio.run`` would
wait for the stuck task too, so :func:`run` leaves the process with ``os._exit``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
from fastapi import FastAPI

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cairn.api.app import create_app  # noqa: E402
from cairn.config import EmbeddingSettings, Settings  # noqa: E402
from cairn.db.roles import DEFAULT_APP_ROLE  # noqa: E402
from cairn.runtime import EmbeddedNats, EmbeddedPostgres  # noqa: E402

MODELS = Path(os.environ.get("CAIRN_TEST_MODEL_DIR", REPO / ".cairn" / "models"))
SHUTDOWN_S = 20.0
T = TypeVar("T")


@contextlib.asynccontextmanager
async def served_app(embedding: dict[str, Any] | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app; ``embedding``: overrides of the embedding settings."""
    async with served(embedding) as (http, _):
        yield http


@contextlib.asynccontextmanager
async def served(
    embedding: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
    """A client of the app and the app (its resources reach the database directly)."""
    root = Path(tempfile.mkdtemp(prefix="cairn-chunks-bench-"))
    postgres, nats = EmbeddedPostgres(root / "pg", fast=True), EmbeddedNats(root / "nats")
    postgres.start()
    nats.start()
    try:
        settings = Settings(
            data_dir=root / "data", admin_database_url=postgres.url,
            database_url=postgres.url_for(DEFAULT_APP_ROLE), nats_url=nats.url,
            embedding=EmbeddingSettings(model_dir=MODELS, **(embedding or {})),
        )  # fmt: skip
        app = create_app(settings)
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        try:
            await asyncio.wait_for(app.state.resources.nats.ready.wait(), 30)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
                yield http, app
        finally:
            stopping = asyncio.ensure_future(lifespan.__aexit__(None, None, None))
            await asyncio.wait({stopping}, timeout=SHUTDOWN_S)
    finally:
        nats.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def run(main: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run(main())``, returning before a stalled shutdown task is waited for."""
    loop = asyncio.new_event_loop()
    result = loop.run_until_complete(main())
    sys.stdout.flush()
    sys.stderr.flush()
    return result


def leave(code: int = 0) -> None:
    """End the process now (see the module docstring)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
