"""The context builder as the worker and the API use it: which agents an event triggers,
and one assembly written per agent."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.assemblies.entry import WORKER, entry_of, written_with
from cairn.assemblies.queue import EntryQueue
from cairn.breadcrumbs.generated import GeneratedWriter
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.text import body_text
from cairn.config import Limits, Settings
from cairn.context.agents import CONTEXT_SCHEMA, Agent
from cairn.context.answers import AnswerCache
from cairn.context.assemble import Assembly, AssemblyOptions, assemble
from cairn.context.block_store import (
    Rendering,
    as_row,
    digest_of,
    load_blocks,
    render_blocks,
    store_blocks,
)
from cairn.context.blocks import BLOCK_FORMAT, CachedBlock, ItemBlocks
from cairn.context.directory import Directory
from cairn.context.domain_store import load_domains
from cairn.context.explain import Timer
from cairn.context.graph_memory import GraphMemory
from cairn.context.model import Record
from cairn.context.ranking import single_threaded_blas
from cairn.context.records import RecordCache, to_record
from cairn.context.terms import CommonWords
from cairn.context.tokens import TokenCounter, ensure_tokenizer_files
from cairn.context.trigger import AssemblyTrigger, stored_trigger
from cairn.context.write import write_context
from cairn.db.engine import tenant_session
from cairn.embedding import Embedder
from cairn.principal import Principal
from cairn.transforms import Transforms
from cairn.transforms.cache import LRU

log = logging.getLogger(__name__)

BLOCK_CACHE_SIZE = 20_000
RECORD_CACHE_SIZE = 20_000


@dataclass
class ContextBuilder:
    session_factory: async_sessionmaker[AsyncSession]
    transforms: Transforms
    counter: TokenCounter
    directory: Directory
    options: AssemblyOptions
    embedder: Embedder
    limits: Limits
    # Rendered blocks, their token counts and their lines' (None: not counted yet, or no
    # line) by (format, record id, version, hints), across assemblies: records around a
    # session's triggers recur in most of its assemblies.
    blocks: LRU[Hashable, CachedBlock] = field(default_factory=lambda: LRU(BLOCK_CACHE_SIZE))
    # Records by id and version, so the graph stage does not fetch and decode them again.
    records: RecordCache = field(default_factory=lambda: RecordCache(RECORD_CACHE_SIZE))
    # Each owner's common words, which nominate no search candidate (context.terms).
    common_words: CommonWords = field(default_factory=CommonWords)
    # On-demand answers (POST /contexts/query) until the tenant changes (context.answers).
    answers: AnswerCache = field(default_factory=lambda: AnswerCache(0, 0.0, 0.0))
    # Versions of each agent.context.v1 record its history keeps (0: all).
    history_versions: int = 20
    # On-demand assemblies' log entries, written after their answers (the API runs it).
    assembly_log: EntryQueue | None = None
    # Tenants' graphs walked in memory instead of by SQL (the worker's, see
    # context.graph_memory); None: by SQL.
    graphs: GraphMemory | None = None

    @classmethod
    def create(
        cls,
        settings: Settings,
        session_factory: async_sessionmaker[AsyncSession],
        transforms: Transforms,
        embedder: Embedder,
    ) -> ContextBuilder:
        """Built once per process (loads the tokenizer: ~0.3 s)."""
        single_threaded_blas()
        options = settings.context
        tokenizers = ensure_tokenizer_files(
            options.tokenizer_dir or settings.data_dir / "tokenizers"
        )
        return cls(
            session_factory=session_factory,
            transforms=transforms,
            counter=TokenCounter.from_dir(tokenizers, options.encoding),
            directory=Directory(session_factory, on_change=transforms.invalidate),
            options=AssemblyOptions(
                default_budget=options.default_budget,
                max_nodes=options.max_nodes,
                radius=options.radius,
                fanout=options.fanout,
                similarity_scale=options.similarity_scale,
                max_candidates=options.max_candidates,
                neighbour_support=options.neighbour_support,
            ),
            embedder=embedder,
            limits=settings.limits,
            answers=AnswerCache(
                options.query_cache_size, options.query_cache_ttl_s, options.query_cache_settle_s
            ),
            history_versions=options.history_versions,
            assembly_log=EntryQueue(session_factory),
        )

    async def on_event(self, event: Mapping[str, Any]) -> int:
        """Assemble for every agent the event triggers; returns how many were written."""
        self.directory.on_event(event)
        if event.get("type") == "breadcrumb.deleted" or event.get("schema_name") == CONTEXT_SCHEMA:
            return 0
        owner = uuid.UUID(str(event["owner_id"]))
        trigger_id = uuid.UUID(str(event["breadcrumb_id"]))
        agents = [a for a in await self.directory.agents(owner) if a.triggered_by(event)]
        written = 0
        for agent in agents:
            if await self.build(agent, trigger_id, str(event.get("event_id", ""))) is not None:
                written += 1
        return written

    async def build(
        self, agent: Agent, trigger_id: uuid.UUID, event_id: str, *, origin: str = WORKER
    ) -> Row | None:
        """Assemble and write the context, and log the assembly with it: one statement in
        the common case (``origin``: who asked, see cairn.assemblies.entry)."""
        excluded = await self.directory.excluded(agent.owner_id)
        rendering = Rendering()
        # Within the trigger's tenant: no source, graph walk or write can leave it.
        scoped = tenant_session(self.session_factory, agent.owner_id)
        async with scoped as session, session.begin():
            timer = Timer()
            with timer.phase("trigger"):
                found = await stored_trigger(session, agent.owner_id, trigger_id)
            if found is None:
                return None
            assembly = await self._assemble(
                session, agent, found, excluded, event_id=event_id, timer=timer,
                rendering=rendering,
            )  # fmt: skip
            principal = Principal(agent.owner_id, f"context-builder:{agent.agent_id}")
            writer = GeneratedWriter(
                session, self.embedder, self.limits, principal, self.transforms
            )
            entry = entry_of(
                agent.owner_id, agent.agent_id, origin, assembly.context,
                session_tag=assembly.session_tag, trigger_id=trigger_id,
                timings_ms=timer.as_dict(),
            )  # fmt: skip
            log = written_with(entry, time.perf_counter())
            with timer.phase("write"):
                written = await write_context(
                    writer, assembly, keep_versions=self.history_versions, log=log
                )
        await self.keep_rendered(agent.owner_id, rendering)
        return written

    async def preview(
        self,
        agent: Agent,
        trigger: uuid.UUID | AssemblyTrigger,
        *,
        timer: Timer,
        budget: int | None = None,
    ) -> Assembly | None:
        """The assembly ``build`` would write, written nowhere: the transaction is read-only
        (PostgreSQL refuses any write in it). None when a stored trigger is gone."""
        excluded = await self.directory.excluded(agent.owner_id)
        rendering = Rendering()
        scoped = tenant_session(self.session_factory, agent.owner_id)
        async with scoped as session, session.begin():
            await session.execute(text("SET TRANSACTION READ ONLY"))
            if isinstance(trigger, uuid.UUID):
                with timer.phase("trigger"):
                    found = await stored_trigger(session, agent.owner_id, trigger)
                if found is None:
                    return None
                trigger = found
            assembly = await self._assemble(
                session, agent, trigger, excluded, event_id="on-demand", timer=timer,
                budget=budget, rendering=rendering,
            )  # fmt: skip
        await self.keep_rendered(agent.owner_id, rendering)
        return assembly

    async def _assemble(
        self,
        session: AsyncSession,
        agent: Agent,
        trigger: AssemblyTrigger,
        excluded: frozenset[str],
        *,
        event_id: str,
        timer: Timer,
        budget: int | None = None,
        rendering: Rendering | None = None,
    ) -> Assembly:
        async def item_blocks(
            session: AsyncSession, owner_id: uuid.UUID, records: list[Record]
        ) -> ItemBlocks:
            return await self.item_blocks(session, owner_id, records, rendering)

        return await assemble(
            session, agent, trigger,
            event_id=event_id, excluded=excluded, counter=self.counter,
            item_blocks=item_blocks, options=self.options, record_cache=self.records,
            common_words=self.common_words, llm_config=await _llm_config(session, agent),
            timer=timer, budget_override=budget,
            domains=await load_domains(session, agent.owner_id, self.embedder),
            graphs=self.graphs,
        )  # fmt: skip

    async def item_blocks(
        self,
        session: AsyncSession,
        owner_id: uuid.UUID,
        records: list[Record],
        rendering: Rendering | None = None,
    ) -> ItemBlocks:
        """Every record's block as its hints render it (compactly when it has none): from
        the block cache when the record was rendered before at this version with the same
        hints, else from the stored blocks (one query), else rendered now, all in one batch
        (no I/O per record). ``rendering`` notes what is rendered here, to be stored once the
        assembly is done (:meth:`keep_rendered`)."""
        rows = {record.id: as_row(record) for record in records}
        definitions = await self.transforms.definitions_for(session, owner_id, rows.values())
        keys: dict[uuid.UUID, Hashable | None] = {}
        storable: dict[uuid.UUID, tuple[int, Hashable]] = {}  # (version, hints) by id
        for record in records:
            definition = definitions.get(record.schema_name or "")
            hints = self.transforms.render_key(rows[record.id], definition)
            keys[record.id] = (
                None if hints is None else (BLOCK_FORMAT, record.id, record.version, hints)
            )
            if hints is not None and record.version is not None:
                storable[record.id] = (record.version, hints)
        texts: dict[uuid.UUID, str] = {}
        blocks = ItemBlocks(
            lambda record: texts.get(record.id, ""), self.counter, cache=self.blocks, keys=keys
        )
        encoding = self.counter.encoding_name
        stored = {
            record_id: (version, digest_of(encoding, hints))
            for record_id, (version, hints) in storable.items()
            if not blocks.cached(record_id)
        }
        blocks.serve(await load_blocks(session, stored))
        missing = [rows[record.id] for record in records if not blocks.cached(record.id)]
        views = await self.transforms.render_resolved(missing, definitions)
        for row, view in zip(missing, views, strict=True):
            texts[row["id"]] = body_text(view.context, view.source, view.replaced, row["title"])
            if view.error:  # a fallback (e.g. over its time budget) may render next time
                keys[row["id"]] = None
        if rendering is not None:
            rendering.blocks, rendering.wanted = blocks, stored
            rendering.records = {record.id: record for record in records}
        return blocks

    async def store_block(self, row: Mapping[str, Any]) -> None:
        """Render the block of a record just written and store it, so that no worker's
        assembly renders it again (the worker calls this after the record's edge step).

        In a transaction of its own, after the step's: storing the block takes a key-share
        lock on the record, which inside the step would come after the step's processing
        row, the reverse of a concurrent update's order (the record, then that row), and
        the two deadlocked. A failure here is logged: a later assembly renders the block
        and stores it, the record's edges are not held for it."""
        record = to_record(row)
        try:
            scoped = tenant_session(self.session_factory, record.owner_id)
            async with scoped as session, session.begin():
                blocks = await render_blocks(
                    session, record.owner_id, [record], self.transforms, self.counter
                )
                await store_blocks(session, record.owner_id, blocks)
        except Exception:  # an optimisation: nothing depends on it
            log.warning("could not store the block of %s", record.id, exc_info=True)
            return
        for block in blocks:
            key = (BLOCK_FORMAT, block.record_id, block.version, block.hints)
            self.blocks.put(key, (block.block, block.tokens, block.line_tokens))

    async def keep_rendered(self, owner_id: uuid.UUID, rendering: Rendering) -> None:
        """Store the blocks an assembly rendered, in a transaction of their own after the
        assembly's: a failure here costs a later assembly a render, never this one's
        context."""
        fresh = rendering.fresh(self.counter, owner_id)
        if not fresh:
            return
        try:
            scoped = tenant_session(self.session_factory, owner_id)
            async with scoped as session, session.begin():
                await store_blocks(session, owner_id, fresh)
        except Exception:  # an optimisation: the context is written already
            log.warning("could not store %d rendered blocks", len(fresh), exc_info=True)


async def _llm_config(session: AsyncSession, agent: Agent) -> dict[str, Any] | None:
    if agent.llm_config_id is None:
        return None
    try:
        config_id = uuid.UUID(agent.llm_config_id)
    except ValueError:
        return None
    query = text("SELECT context FROM breadcrumbs WHERE id = :id AND owner_id = :owner")
    row = await session.execute(query, {"id": config_id, "owner": agent.owner_id})
    context = row.scalar_one_or_none()
    return context if isinstance(context, dict) else None
