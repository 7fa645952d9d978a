"""The context builder as the worker and the API use it: which agents an event triggers,
and one assembly written per agent."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.breadcrumbs.text import context_as_text, transformed_as_text
from cairn.config import Limits, Settings
from cairn.context.agents import CONTEXT_SCHEMA, Agent
from cairn.context.assemble import AssemblyOptions, assemble
from cairn.context.directory import Directory
from cairn.context.model import Record
from cairn.context.tokens import TokenCounter, ensure_tokenizer_files
from cairn.context.write import write_context
from cairn.db.engine import tenant_session
from cairn.embedding import Embedder
from cairn.principal import Principal
from cairn.transforms import Transforms

log = logging.getLogger(__name__)


@dataclass
class ContextBuilder:
    session_factory: async_sessionmaker[AsyncSession]
    transforms: Transforms
    counter: TokenCounter
    directory: Directory
    options: AssemblyOptions
    embedder: Embedder
    limits: Limits

    @classmethod
    def create(
        cls,
        settings: Settings,
        session_factory: async_sessionmaker[AsyncSession],
        transforms: Transforms,
        embedder: Embedder,
    ) -> ContextBuilder:
        """Built once per process (loads the tokenizer: ~0.3 s)."""
        options = settings.context
        tokenizers = ensure_tokenizer_files(
            options.tokenizer_dir or settings.data_dir / "tokenizers"
        )
        return cls(
            session_factory=session_factory,
            transforms=transforms,
            counter=TokenCounter.from_dir(tokenizers, options.encoding),
            directory=Directory(session_factory),
            options=AssemblyOptions(
                default_budget=options.default_budget,
                max_nodes=options.max_nodes,
                radius=options.radius,
                fanout=options.fanout,
                similarity_scale=options.similarity_scale,
            ),
            embedder=embedder,
            limits=settings.limits,
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

    async def build(self, agent: Agent, trigger_id: uuid.UUID, event_id: str) -> Row | None:
        excluded = await self.directory.excluded(agent.owner_id)
        # Within the trigger's tenant: no source, graph walk or write can leave it.
        scoped = tenant_session(self.session_factory, agent.owner_id)
        async with scoped as session, session.begin():
            assembly = await assemble(
                session, agent, trigger_id,
                event_id=event_id, excluded=excluded, counter=self.counter,
                render_texts=self.render_texts, options=self.options,
                llm_config=await _llm_config(session, agent),
            )  # fmt: skip
            if assembly is None:
                return None
            principal = Principal(agent.owner_id, f"context-builder:{agent.agent_id}")
            writer = BreadcrumbWriter(
                session, self.embedder, self.limits, principal, self.transforms
            )
            return await write_context(writer, assembly)

    async def render_texts(
        self, session: AsyncSession, owner_id: uuid.UUID, records: list[Record]
    ) -> dict[uuid.UUID, str]:
        """Every record as its hints render it, in one batch (no I/O per record)."""
        rows = [_as_row(record) for record in records]
        views = await self.transforms.render_many(session, owner_id, rows)
        return {
            record.id: transformed_as_text(view.context)
            if view.replaced
            else context_as_text(view.context)
            for record, view in zip(records, views, strict=True)
        }


def _as_row(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "version": record.version,
        "title": record.title,
        "tags": list(record.tags),
        "schema_name": record.schema_name,
        "created_at": record.created_at,
        "context": record.context,
        "llm_hints": record.llm_hints,
    }


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
