"""The API's composition root: ``create_app`` and the lifespan that builds every resource."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from fastapi import Depends, FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.acl import endpoints as acl
from cairn.api import health, workers
from cairn.api.errors import install_error_handlers
from cairn.api.input import refuse_unstorable_text
from cairn.api.middleware import BodySizeLimit, RequestMetrics
from cairn.api.resources import Resources
from cairn.assemblies import endpoints as assemblies
from cairn.assemblies.retention import run_retention
from cairn.auth import admin as auth_admin, endpoints as auth
from cairn.auth.service import Authenticator
from cairn.breadcrumbs import endpoints as breadcrumbs
from cairn.breadcrumbs.chunks import ChunkWindow
from cairn.config import Settings, get_settings
from cairn.console import routes as console
from cairn.context import endpoints as contexts
from cairn.context.builder import ContextBuilder
from cairn.context.relabel import Relabeller, run_relabelling
from cairn.context.sources import nearest
from cairn.db.engine import (
    bypasses_rls,
    create_engine,
    create_session_factory,
    warn_if_rls_bypassed,
)
from cairn.db.leakproof import warn_if_unmarked
from cairn.db.migrate import upgrade
from cairn.db.roles import app_role
from cairn.db.tenants import ensure_tenant
from cairn.edges import endpoints as graph
from cairn.embedding import Embedder
from cairn.embedding.factory import load_embedder
from cairn.errors import ConfigurationError
from cairn.events import endpoints as dead_events
from cairn.events.nats_client import NatsHolder
from cairn.events.runtime import start_events
from cairn.mcp.endpoint import McpEndpoint
from cairn.paths import endpoints as paths
from cairn.paths.sweeper import AbandonSweep, run_sweeps
from cairn.processing import endpoints as coverage
from cairn.processing.metrics import run_gauges
from cairn.processing.retry import RetryJob, run_retries
from cairn.reindex import endpoints as reindex
from cairn.reindex.background import run_reindexing
from cairn.reindex.runner import Reindexer
from cairn.runtime.heap import settle
from cairn.secrets import endpoints as secrets
from cairn.secrets.crypto import Keyring
from cairn.stream import endpoints as stream
from cairn.stream.asgi import ServerSend
from cairn.stream.feed import EventFeed
from cairn.tasks import stop_tasks
from cairn.transforms import Transforms
from cairn.webhooks import endpoints as webhooks

log = logging.getLogger(__name__)

LOG_FLUSH_S = 2.0  # at shutdown, for the assembly log's queued entries

ROUTERS = (
    health.router,
    workers.router,
    auth.router,
    auth_admin.router,
    breadcrumbs.router,
    stream.router,
    webhooks.router,
    dead_events.router,
    contexts.router,
    assemblies.router,
    acl.router,
    secrets.router,
    coverage.router,
    reindex.router,
    paths.router,
    graph.router,
)


def create_app(
    settings: Settings | None = None, *, embedder: Embedder | None = None, migrate: bool = True
) -> FastAPI:
    """Build the app; ``embedder`` replaces the ONNX model (tests), ``migrate`` runs Alembic.

    Raises ``ConfigurationError`` for settings that cannot serve safely (authentication
    disabled off loopback, a missing or unreadable token key) before anything starts."""
    settings = settings or get_settings()
    authenticator = Authenticator.from_settings(settings)
    mcp = McpEndpoint(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        resources = await _open(settings, embedder, authenticator, migrate=migrate)
        app.state.resources = resources
        settle()  # what starting built lives as long as the process
        try:
            async with mcp.running():
                yield
        finally:
            await _close(resources, owns_embedder=embedder is None)

    app = FastAPI(
        title="Cairn",
        summary="Event-driven context assembly for AI agents (RCRT-compatible API)",
        version="0.1.0",
        lifespan=lifespan,
        dependencies=[Depends(refuse_unstorable_text)],
    )
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    console.install(app)  # the web console at /, its assets under /console/
    app.router.routes.append(mcp.route())  # MCP over streamable HTTP, behind the same auth
    limits = settings.limits
    batch = {"/breadcrumbs/batch": limits.max_batch_body_bytes}
    app.add_middleware(BodySizeLimit, max_bytes=limits.max_body_bytes, larger=batch)
    app.add_middleware(RequestMetrics)
    app.add_middleware(ServerSend)  # outermost: SSE body chunks skip the layers above
    return app


async def _open(
    settings: Settings, embedder: Embedder | None, auth: Authenticator, *, migrate: bool
) -> Resources:
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL is not set (or use `cairn up` for embedded services)")
    system = await _open_system(settings, migrate=migrate)
    engine = create_engine(settings.database_url, settings)
    if not await warn_if_rls_bypassed(engine):
        await warn_if_unmarked(engine)
    tenant = uuid.UUID(settings.default_tenant_id)
    await ensure_tenant(engine, tenant, settings.default_tenant_name)
    if embedder is None:
        embedder = await asyncio.to_thread(load_embedder, settings)
    sessions = create_session_factory(engine)
    transforms = Transforms(settings.transforms)
    contexts = await asyncio.to_thread(
        ContextBuilder.create, settings, sessions, transforms, embedder
    )
    resources = Resources(settings, engine, sessions, embedder, tenant, transforms, contexts, auth)
    resources.system_engine = system
    # The schema owner builds the semantic source's partial indexes (the app role may not).
    nearest.INDEXES.owner_url = settings.system_database_url
    resources.system_sessions = create_session_factory(system)
    resources.keyring = Keyring.from_settings(settings.secrets)
    _start_processing(resources)
    relabeller = Relabeller(
        resources.system_sessions, embedder, batch=settings.context.domains_relabel_batch
    )
    relabel = run_relabelling(relabeller, settings.context.domains_relabel_interval_s)
    resources.background.append(asyncio.create_task(relabel, name="domain-relabel"))
    if settings.reindex.background:
        reindexer = Reindexer(
            resources.system_sessions, embedder, settings.reindex, transforms=settings.transforms,
            chunk_window=ChunkWindow.of(settings.embedding),
        )  # fmt: skip
        reindexing = run_reindexing(reindexer, settings.reindex.poll_interval_s)
        resources.background.append(asyncio.create_task(reindexing, name="reindex"))
    retention = run_retention(
        resources.system_sessions, settings.context.assembly_log_retention_days,
        settings.context.assembly_log_purge_interval_s,
        batch=settings.context.assembly_log_purge_batch,
    )  # fmt: skip
    resources.background.append(asyncio.create_task(retention, name="assembly-log-retention"))
    if contexts.assembly_log is not None:
        entries = contexts.assembly_log.run()
        resources.background.append(asyncio.create_task(entries, name="assembly-log-writer"))
    forget = contexts.answers.forget_on_commit(sessions)
    resources.background.append(asyncio.create_task(forget, name="context-answers"))
    if settings.nats_url:
        resources.nats = NatsHolder(settings.nats_url)
        resources.feed = EventFeed(resources.nats)
        listeners = (
            transforms.invalidate_for_event,
            contexts.directory.on_event,
            contexts.answers.on_event,
        )
        # Core NATS is at most once: events missed while disconnected are not replayed.
        resources.nats.on_reconnect.append(contexts.answers.clear)
        events = start_events(
            settings, resources.nats, resources.session_factory, listeners,
            system_sessions=resources.system_sessions,
        )  # fmt: skip
        resources.background.extend(events)
    return resources


def _start_processing(resources: Resources) -> None:
    """The retry job of failed and pending processing stages (where the embedder is), the
    coverage gauges and the sweep that abandons idle debug paths."""
    settings = resources.settings.processing
    sessions = resources.system_sessions
    window = ChunkWindow.of(resources.settings.embedding)
    job = RetryJob(sessions, resources.session_factory, resources.embedder, settings, window)
    resources.background.append(asyncio.create_task(run_retries(job), name="processing-retries"))
    gauges = run_gauges(resources.system_sessions, settings.gauge_interval_s)
    resources.background.append(asyncio.create_task(gauges, name="coverage-gauges"))
    sweep = AbandonSweep(
        sessions, resources.session_factory, resources.embedder, resources.settings.limits,
        resources.transforms, resources.settings.paths,
    )  # fmt: skip
    resources.background.append(asyncio.create_task(run_sweeps(sweep), name="path-sweep"))


async def _open_system(settings: Settings, *, migrate: bool) -> AsyncEngine:
    """The schema owner's engine: migrates, then serves the jobs that span tenants (a small
    pool: the relay has its own connection, the rest poll)."""
    url = settings.system_database_url
    assert url is not None
    system = create_engine(url, settings, pool_size=2, max_overflow=4)
    if migrate:
        await upgrade(system, app_role=app_role(settings))
    if not await bypasses_rls(system):
        await system.dispose()
        raise ConfigurationError(
            "CAIRN_ADMIN_DATABASE_URL (or DATABASE_URL) must log in as a superuser or a role "
            "with BYPASSRLS: the outbox relay reads every tenant's events"
        )
    return system


async def _close(resources: Resources, *, owns_embedder: bool) -> None:
    if resources.contexts.assembly_log is not None:  # the answers' log entries still queued
        with suppress(TimeoutError):
            async with asyncio.timeout(LOG_FLUSH_S):
                await resources.contexts.assembly_log.flush()
    await stop_tasks(resources.background)
    if resources.feed is not None:
        await resources.feed.close()
    if resources.nats is not None:
        await resources.nats.close()
    if owns_embedder:
        await resources.embedder.aclose()
    await resources.engine.dispose()
    if resources.system_engine is not None:
        await resources.system_engine.dispose()
