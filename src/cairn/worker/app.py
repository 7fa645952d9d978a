"""The worker's composition root: builds its resources, consumes until told to stop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.config import Settings
from cairn.context.builder import ContextBuilder
from cairn.context.graph_memory import GraphMemory
from cairn.context.sources import nearest
from cairn.db.engine import create_engine, create_session_factory
from cairn.edges.builder import EdgeOptions
from cairn.events.consumer import ConsumerRunner, database_runner
from cairn.events.messages import ConsumerSpec
from cairn.events.nats_client import NatsHolder
from cairn.paths.summariser import Summariser, path_summariser
from cairn.runtime.heap import settle
from cairn.tasks import stop_task
from cairn.transforms import Transforms
from cairn.worker.handlers import Handlers

log = logging.getLogger(__name__)

DURABLE = "cairn-worker"
DRAIN_TIMEOUT_S = 30.0


class NoEmbedder:
    """The worker writes only records that are never embedded (assembled contexts)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("the worker does not embed")

    async def aclose(self) -> None:
        return None


async def run_worker(settings: Settings, stop: asyncio.Event) -> None:
    """Consume breadcrumb events until ``stop`` is set, then drain and close."""
    if not settings.database_url or not settings.nats_url:
        raise RuntimeError("the worker needs DATABASE_URL and NATS_URL")
    engine = create_engine(settings.database_url, settings)
    # The schema owner builds the semantic source's partial indexes (the app role may not).
    nearest.INDEXES.owner_url = settings.system_database_url
    holder = NatsHolder(settings.nats_url)
    metrics = serve_metrics(settings.host, settings.processing.worker_metrics_port)
    summariser = path_summariser(settings.paths)
    try:
        sessions = create_session_factory(engine)
        builder = await asyncio.to_thread(
            ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
        )
        if settings.context.graph_in_memory:
            builder.graphs = GraphMemory(sessions=sessions)
        await holder.run()
        consumer = worker_consumer(
            settings, sessions, holder, builder, durable=settings.worker_durable,
            summariser=summariser,
        )  # fmt: skip
        settle()  # what starting built lives as long as the process
        consuming = asyncio.create_task(consumer.run(), name="worker-consumer")
        await _until(stop, consuming)
        await consumer.stop()
        done, _ = await asyncio.wait({consuming}, timeout=DRAIN_TIMEOUT_S)
        if done:
            consuming.result()  # a consumer that failed fails the worker
        else:
            log.warning("worker did not drain in %.0f s; unacked events come back", DRAIN_TIMEOUT_S)
            await stop_task(consuming)
        log.info("worker stopped")
    finally:
        if metrics is not None:
            metrics.shutdown()
            metrics.server_close()
        if summariser is not None:
            await summariser.aclose()
        await holder.close()
        await engine.dispose()


def serve_metrics(host: str, port: int) -> WSGIServer | None:
    """The worker's own ``/metrics`` (its consumer, edge and assembly figures), on a thread
    of prometheus_client's; port 0: none."""
    if not port:
        return None
    server, _ = start_http_server(port, addr=host)
    log.info("worker metrics on http://%s:%d/metrics", host, port)
    return server


def worker_consumer(
    settings: Settings,
    sessions: async_sessionmaker[AsyncSession],
    holder: NatsHolder,
    builder: ContextBuilder,
    *,
    durable: str = DURABLE,
    summariser: Summariser | None = None,
) -> ConsumerRunner:
    """The worker's handlers on the shared durable consumer ``durable``; ``summariser``:
    the optional LLM summary of resolved debug paths (None: off)."""
    threshold = settings.paths.resolution_threshold
    handlers = Handlers(
        sessions, EdgeOptions(), builder, path_threshold=threshold, summariser=summariser
    )
    events = settings.events
    spec = ConsumerSpec.from_settings(
        durable, settings.worker_concurrency, events.worker_ack_wait_s, events
    )
    return database_runner(holder, handlers.handle, spec, sessions, events)


async def _until(stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    waiting = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({waiting, task}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if task in done:
        await task  # the consumer failed: raise its error
