"""Everything the API process holds for its lifetime, built once in the lifespan."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from cairn.auth.service import Authenticator
from cairn.config import Settings
from cairn.context.builder import ContextBuilder
from cairn.embedding import Embedder
from cairn.events.nats_client import NatsHolder
from cairn.processing.coverage_cache import CoverageCache
from cairn.secrets.crypto import Keyring
from cairn.stream.feed import EventFeed
from cairn.transforms import Transforms


@dataclass
class Resources:
    settings: Settings
    engine: AsyncEngine
    session_factory: async_sessionmaker[AsyncSession]
    embedder: Embedder
    default_tenant: uuid.UUID
    transforms: Transforms  # llm_hints: compiled templates and schema-hint caches
    contexts: ContextBuilder  # on-demand assembly (the worker assembles on events)
    auth: Authenticator  # who is calling (CAIRN_AUTH), and per-caller limits
    nats: NatsHolder | None = None  # when NATS_URL is set
    feed: EventFeed | None = None  # the SSE connections' shared JetStream consumer
    background: list[Any] = field(default_factory=list)
    # The schema owner (CAIRN_ADMIN_DATABASE_URL): only for the jobs that span tenants and
    # for tests looking at tables directly. Requests never use it.
    system_engine: AsyncEngine | None = None
    system_sessions: async_sessionmaker[AsyncSession] = field(init=False)
    keyring: Keyring | None = None  # the secrets KEK; None: /secrets answers 503
    coverage: CoverageCache = field(default_factory=CoverageCache)  # GET /coverage's figures
