"""The worker's registry: event type → what happens. Every entry point is in this table."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn import processing
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.context.builder import ContextBuilder
from cairn.db.engine import tenant_session
from cairn.edges import repository as edge_records
from cairn.edges.builder import EdgeOptions, build_edges
from cairn.edges.repository import CONTEXT_SCHEMA
from cairn.events.messages import Delivery
from cairn.events.outcomes import PoisonMessage
from cairn.paths import refinement, tracking
from cairn.paths.machine import RESOLUTION_THRESHOLD
from cairn.paths.signals import Kind, classify
from cairn.paths.summariser import Summariser
from cairn.principal import Principal

log = logging.getLogger(__name__)

Step = Callable[[dict[str, Any]], Awaitable[None]]


class Handlers:
    """Steps per event type. A database outage propagates as it is: the consumer runner
    recognises it, holds the event and handles it again once the database is back (every
    step is idempotent)."""

    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        edges: EdgeOptions,
        contexts: ContextBuilder,
        *,
        path_threshold: int = RESOLUTION_THRESHOLD,
        summariser: Summariser | None = None,
    ) -> None:
        self.session_factory = session_factory
        self.edge_options = edges
        self.contexts = contexts
        self.path_threshold = path_threshold
        self.summariser = summariser
        # Edges first, so that the assembly walks the trigger's new edges; debug paths
        # before the assembly, so that its context can already see the path's new state.
        created: list[Step] = [
            self.refresh_caches,
            self.build_edges,
            self.track_paths,
            self.assemble,
        ]
        updated: list[Step] = [self.refresh_caches, self.build_edges, self.assemble]
        # The optional LLM summary of a resolved path last, so that nothing waits for it.
        if summariser is not None:
            created.append(self.summarise_paths)
            updated.append(self.summarise_paths)
        self.table: dict[str, list[Step]] = {
            "breadcrumb.created": created,
            "breadcrumb.updated": updated,
            "breadcrumb.deleted": [self.refresh_caches],
        }

    async def handle(self, delivery: Delivery) -> None:
        summary = delivery.summary()
        if summary is not None and summary["schema_name"] == CONTEXT_SCHEMA:
            return  # an assembled context: no step does anything with one (see each)
        await self.handle_event(delivery.event())

    async def handle_event(self, event: dict[str, Any]) -> None:
        steps = self.table.get(str(event.get("type")))
        if steps is None:
            raise PoisonMessage(f"unknown event type {event.get('type')!r}")
        for step in steps:
            await step(event)

    async def refresh_caches(self, event: dict[str, Any]) -> None:
        """Agents, the blacklist and schema hints changed: forget them here at once (other
        workers learn of it from the definitions' generation, see ``build_edges``)."""
        self.contexts.directory.on_event(event)
        self.contexts.transforms.invalidate_for_event(event)

    async def assemble(self, event: dict[str, Any]) -> None:
        written = await self.contexts.on_event(event)
        if written:
            log.debug("assembled %d contexts for %s", written, event.get("breadcrumb_id"))

    async def build_edges(self, event: dict[str, Any]) -> None:
        if event.get("schema_name") == CONTEXT_SCHEMA:
            return  # a context is never linked, and has no processing stage to mark
        owner, record_id = _ids(event)
        # Within the event's tenant: the edge queries cannot reach another tenant's records.
        async with tenant_session(self.session_factory, owner) as session, session.begin():
            # In the same statement, to spare a round trip: whether another worker's event
            # changed this tenant's agents, blacklist or schema hints since they were loaded.
            found = await edge_records.record_for_edges(session, owner, record_id)
            self.contexts.directory.observe(owner, found.generation)
            row = found.record
            if row is None:  # deleted since: nothing to link
                return
            counts = await build_edges(session, row, self.edge_options)
            linked = row["schema_name"] != CONTEXT_SCHEMA  # a context never is
            if linked:  # else its stage is not needed
                await processing.mark_done(session, owner, [record_id], processing.EDGED)
        if linked:
            # Its block, rendered once here rather than by each assembly that meets it
            # (after the step's transaction: see ContextBuilder.store_block).
            await self.contexts.store_block(row)
        if counts:
            log.debug("edges for %s: %s", record_id, dict(counts))

    async def track_paths(self, event: dict[str, Any]) -> None:
        """The record's effect on its session's debug path. Records that say nothing about
        one (most) cost no query."""
        if not tracking.tracked(event):
            return
        signal = classify(event)
        if signal.kind is Kind.NONE:
            return
        owner, _ = _ids(event)
        contexts = self.contexts
        async with tenant_session(self.session_factory, owner) as session, session.begin():
            principal = Principal(owner, "path-tracker")
            writer = GeneratedWriter(
                session, contexts.embedder, contexts.limits, principal, contexts.transforms
            )
            done = await tracking.track(writer, event, signal, threshold=self.path_threshold)
        if done is not None:
            log.debug("path %s: %s", done.path.id, [w.value for w in done.step.waypoints])

    async def summarise_paths(self, event: dict[str, Any]) -> None:
        """The LLM's summary of a path resolved by the worker or through the API, asked
        outside any transaction (see cairn.paths.refinement); other records cost nothing."""
        if self.summariser is None or not refinement.awaits_summary(event):
            return
        owner, path_id = _ids(event)
        async with tenant_session(self.session_factory, owner) as session, session.begin():
            found = await refinement.pending(session, owner, path_id)
        if found is None:
            return
        asked = await refinement.ask(self.summariser, *found)
        contexts = self.contexts
        async with tenant_session(self.session_factory, owner) as session, session.begin():
            principal = Principal(owner, "path-summariser")
            writer = GeneratedWriter(
                session, contexts.embedder, contexts.limits, principal, contexts.transforms
            )
            written = await refinement.record_outcome(writer, path_id, asked)
        log.debug("path %s summarised by %s: %s", path_id, asked.outcome.by, written)


def _ids(event: dict[str, Any]) -> tuple[uuid.UUID, uuid.UUID]:
    try:
        return uuid.UUID(event["owner_id"]), uuid.UUID(event["breadcrumb_id"])
    except (KeyError, ValueError, TypeError) as error:
        raise PoisonMessage(f"event without valid ids: {error}") from error
