"""Cairn's own pipeline, in process, through the real ``ContextBuilder`` and write path.

Per trigger: agent match (the in-memory directory), then ``ContextBuilder.build`` — the
assembly's own ``timings_ms`` give trigger, seeds (every source in one statement), graph,
render_items, select and render; the write (``write_context`` + commit) and any seed source
that runs its query alone are timed by thin wrappers around the product functions — then publish
(commit → event on NATS through the server's outbox relay).

Warm: one builder for the run, caches filled as in a running worker. Cold: a fresh engine
(new connection pool) and a fresh builder (empty agent directory, record, block and
template caches, prepared statements) for that trigger only.
PostgreSQL's own buffers stay warm in both: dropping the OS page cache is not possible
without disturbing everything else on the machine.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from cairn.config import Settings
from cairn.context import builder as builder_module
from cairn.context.builder import ContextBuilder
from cairn.context.graph_memory import GraphMemory
from cairn.context.sources import (
    always as always_source,
    semantic as semantic_source,
    session as session_source,
)
from cairn.context.write import context_record_id
from cairn.db.engine import create_engine, create_session_factory
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder

from .corpus import OWNER
from .measure import PublishProbe, Samples

_CURRENT: dict[str, float] = {}


def _timed(name: str, function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            _CURRENT[name] = (time.perf_counter() - started) * 1000

    return wrapper


def _write_started(function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        _CURRENT["write_started"] = time.perf_counter()
        return await function(*args, **kwargs)

    return wrapper


def instrument() -> None:
    """Time the seed sources and the write separately (idempotent)."""
    # Each source's module-level query function, which its SOURCE calls by name.
    if getattr(builder_module, "_bench_instrumented", False):
        return
    always_source.always_seeds = _timed("seeds_always", always_source.always_seeds)  # type: ignore[assignment]
    semantic_source.semantic_seeds = _timed("seeds_semantic", semantic_source.semantic_seeds)  # type: ignore[assignment]
    session_source.session_seeds = _timed("seeds_session", session_source.session_seeds)  # type: ignore[assignment]
    builder_module.write_context = _write_started(builder_module.write_context)  # type: ignore[assignment]
    builder_module._bench_instrumented = True  # type: ignore[attr-defined]


class CairnRunner:
    """The warm pipeline is one engine and one builder for the whole run, as in a worker;
    a cold trigger runs on a fresh engine and builder of its own, thrown away afterwards,
    so it neither benefits from nor resets the warm caches."""

    def __init__(self, settings: Settings, probe: PublishProbe) -> None:
        self.settings = settings
        self.probe = probe
        self.engine: Any = None
        self.builder: ContextBuilder | None = None
        # As the worker: tenants' graphs in memory, one per process (a cold trigger's fresh
        # builder shares it, as a worker's assemblies do from its start).
        self.graphs = GraphMemory() if settings.context.graph_in_memory else None

    def _make(self) -> tuple[Any, ContextBuilder]:
        engine = create_engine(self.settings.database_url or "", self.settings)
        sessions = create_session_factory(engine)
        builder = ContextBuilder.create(
            self.settings, sessions, Transforms(self.settings.transforms), NoEmbedder()
        )
        builder.graphs = self.graphs
        return engine, builder

    async def fresh(self) -> None:
        """A new pool and a new builder for the warm pipeline: every cache empty."""
        if self.engine is not None:
            await self.engine.dispose()
        self.engine, self.builder = self._make()

    async def run_cold(self, event: dict[str, Any], samples: Samples) -> None:
        """One trigger on a fresh pool and builder (every process-local cache empty)."""
        engine, builder = self._make()
        try:
            await self.run(event, samples, builder)
        finally:
            await engine.dispose()

    async def close(self) -> None:
        if self.engine is not None:
            await self.engine.dispose()

    async def run(
        self, event: dict[str, Any], samples: Samples, builder: ContextBuilder | None = None
    ) -> None:
        """One trigger through ``builder`` (default: the warm one)."""
        builder = builder or self.builder
        assert builder is not None
        _CURRENT.clear()
        started = time.perf_counter()
        agents = [a for a in await builder.directory.agents(OWNER) if a.triggered_by(event)]
        phases = {"agent_match": (time.perf_counter() - started) * 1000}
        for agent in agents:
            session_tag = next((t for t in sorted(event["tags"]) if t.startswith("session:")), None)
            record_id = context_record_id(OWNER, agent.agent_id, session_tag)
            row = await builder.build(agent, uuid.UUID(event["breadcrumb_id"]), event["event_id"])
            committed = time.perf_counter()
            assert row is not None, "trigger vanished"
            timings = row["context"]["timings_ms"]
            for name in ("trigger", "seeds", "graph", "render_items", "select", "render"):
                phases[name] = timings.get(name, 0.0)
            for name in ("seeds_always", "seeds_semantic", "seeds_session"):
                if name in _CURRENT:  # a source that ran its query alone
                    phases[name] = _CURRENT[name]
            phases["write"] = (committed - _CURRENT["write_started"]) * 1000
            e2e = (committed - started) * 1000
            phases["publish"] = await self.probe.publish_ms(
                record_id, _CURRENT["write_started"], committed
            )
            samples.add(phases, e2e)
