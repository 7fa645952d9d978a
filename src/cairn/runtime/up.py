"""``cairn up``: everything on one machine, in the foreground.

Starts the embedded PostgreSQL and NATS (unless DATABASE_URL / NATS_URL point elsewhere),
migrates, serves the API, loads the bootstrap breadcrumbs, prints the ready line, and on
SIGINT/SIGTERM stops the server and then the embedded services.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from contextlib import ExitStack
from pathlib import Path

import uvicorn

from cairn import bootstrap
from cairn.api.app import create_app
from cairn.config import Settings
from cairn.embedding import ensure_model
from cairn.runtime.nats import EmbeddedNats
from cairn.runtime.postgres import EmbeddedPostgres

log = logging.getLogger(__name__)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def up(settings: Settings, bootstrap_dirs: list[Path]) -> None:
    # SIGTERM must unwind like Ctrl-C so the embedded services are stopped too: uvicorn
    # handles the signal while serving and re-raises it afterwards to this handler.
    signal.signal(signal.SIGTERM, _interrupt)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    ensure_model(settings.model_dir)
    with ExitStack() as services:
        updates: dict[str, str] = {}
        if not settings.database_url:
            postgres = services.enter_context(EmbeddedPostgres(settings.data_dir / "postgres"))
            updates["database_url"] = postgres.start()
        if not settings.nats_url:
            nats = services.enter_context(EmbeddedNats(settings.data_dir / "nats"))
            updates["nats_url"] = nats.start()
        asyncio.run(_serve(settings.model_copy(update=updates), bootstrap_dirs))
    log.info("Cairn stopped")


async def _serve(settings: Settings, bootstrap_dirs: list[Path]) -> None:
    app = create_app(settings)
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port, log_config=None, access_log=False
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # start-up failed: raise its error
            return
        await asyncio.sleep(0.05)
    try:
        report = await bootstrap.run(settings.public_url, bootstrap_dirs, show_progress=False)
        if report.failed:
            log.warning("bootstrap: %d records failed to load", len(report.failed))
    except Exception:
        log.exception("bootstrap failed; serving without it")
    print(f"Cairn ready: {settings.public_url}", flush=True)
    await serving
