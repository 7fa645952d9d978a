"""``cairn up``: everything on one machine, in the foreground.

Starts the embedded PostgreSQL and NATS (unless DATABASE_URL / NATS_URL point elsewhere)
and restarts either if it stops (``runtime.supervisor``), migrates, serves the API, loads the
bootstrap breadcrumbs, runs one worker beside the server, prints the ready line, and on
SIGINT/SIGTERM stops the server, drains the worker and then stops the embedded services.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import uvicorn
from sse_starlette.sse import AppStatus
from uvicorn.loops.auto import auto_loop_factory

from cairn import bootstrap
from cairn.api.app import create_app
from cairn.api.server import server_config
from cairn.auth.local import bootstrap_token, prepare_key
from cairn.auth.service import check_bind
from cairn.config import Settings
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.embedding import ensure_model
from cairn.runtime.nats import EmbeddedNats
from cairn.runtime.postgres import EmbeddedPostgres
from cairn.runtime.supervisor import Supervisor, Watched
from cairn.secrets.crypto import ensure_local_kek
from cairn.worker.app import run_worker

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: `up` stops the server, then drains the
    worker, then stops the embedded services, in that order (uvicorn would re-raise the
    signal after its shutdown and cut that sequence short)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def up(settings: Settings, bootstrap_dirs: list[Path]) -> None:
    check_bind(settings)  # before anything starts: auth disabled only on loopback
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    key = prepare_key(settings)
    if key is not None:
        log.info("token signing key: %s (generated once, reused)", key)
    ensure_model(settings.model_dir)
    # An ExitStack runs every stop, last started first, even when the server or another
    # stop raised; each stop is registered before its start, so a start that fails halfway
    # still stops what it launched.
    with ExitStack() as services:
        updates: dict[str, object] = {
            "secrets": ensure_local_kek(settings.secrets, settings.data_dir)
        }
        watched: list[Watched] = []
        if not settings.database_url:
            # The superuser migrates and runs the cross-tenant jobs; requests and the worker
            # log in as the application role, so row-level security applies to them.
            postgres = EmbeddedPostgres(settings.data_dir / "postgres")
            services.callback(postgres.stop)
            updates["admin_database_url"] = postgres.start()
            updates["database_url"] = postgres.url_for(DEFAULT_APP_ROLE)
            watched.append(Watched("postgres", lambda: postgres.running, postgres.start))
        if not settings.nats_url:
            nats = EmbeddedNats(settings.data_dir / "nats")
            services.callback(nats.stop)
            updates["nats_url"] = nats.start()
            watched.append(Watched("nats", lambda: nats.running, nats.start))
        # Left first: nothing restarts a service while it is being stopped.
        services.enter_context(Supervisor(watched))
        # The event loop `cairn serve` has (uvicorn's choice: uvloop where installed). On the
        # standard loop, a record posted to 200 SSE clients took its loop ~2 ms more CPU
        # (21.6 against 19.1 ms, with the POST) and the fan-out to the last client ~1.7 ms
        # longer (median of 4 interleaved rounds, loaded machine).
        with asyncio.Runner(loop_factory=auto_loop_factory()) as runner:
            runner.run(_serve(settings.model_copy(update=updates), bootstrap_dirs))
    log.info("Cairn stopped")


def _request_exit(server: uvicorn.Server) -> None:
    # Open event streams end with a reconnect frame (sse-starlette watches this flag; `up`
    # handles the signals itself, so the library never sees them).
    AppStatus.should_exit = True
    if server.should_exit:
        server.force_exit = True  # a second Ctrl-C: stop waiting for open connections
    server.should_exit = True


async def _serve(settings: Settings, bootstrap_dirs: list[Path]) -> None:
    app = create_app(settings)
    config = server_config(
        app, settings.limits, host=settings.host, port=settings.port, access_log=False
    )
    server = _Server(config)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _request_exit, server)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # start-up failed: raise its error
            return
        await asyncio.sleep(0.05)
    try:
        report = await bootstrap.run(
            settings.public_url,
            bootstrap_dirs,
            show_progress=False,
            token=bootstrap_token(settings),
        )
        if report.failed:
            log.warning("bootstrap: %d records failed to load", len(report.failed))
    except Exception:
        log.exception("bootstrap failed; serving without it")
    stop_worker = asyncio.Event()
    worker = None
    if settings.run_worker:
        worker = asyncio.create_task(run_worker(settings, stop_worker), name="worker")
    print(f"Cairn ready: {settings.public_url}", flush=True)
    if settings.auth == "jwt":
        print(
            "Authentication: CAIRN_AUTH=jwt. Mint a first token with\n"
            f"  cairn token --data-dir {settings.data_dir} --agent-id <agent> --roles curator",
            flush=True,
        )
    try:
        await serving
    finally:
        stop_worker.set()
        if worker is not None:
            await _drained(worker)


async def _drained(worker: asyncio.Task[None]) -> None:
    """Wait for the worker to drain; its failure is logged, not raised, so that the
    embedded services are still stopped cleanly after it."""
    try:
        await worker
    except Exception:
        log.exception("the worker failed")
