"""Background upkeep: embed records whose embedding failed when they were written.

It looks across every tenant, so it runs on the system sessions (the schema owner's engine,
exempt from row-level security); it only ever fills ``embedding`` (and a long record's
chunks, which the write path leaves to it when they could not be embedded) for the
``llm_text`` it read.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cairn.breadcrumbs import repository
from cairn.breadcrumbs.chunks import ChunkWindow, EmbeddedChunk, embed_chunks, replace_chunks
from cairn.embedding import Embedder

log = logging.getLogger(__name__)


async def embed_pending(
    session_factory: async_sessionmaker[AsyncSession],
    embedder: Embedder,
    *,
    batch: int = 64,
    window: ChunkWindow | None = None,
) -> int:
    """Embed one batch of records stored without an embedding; returns how many were filled."""
    async with session_factory() as session:
        pending = await repository.unembedded(session, limit=batch)
    if not pending:
        return 0
    vectors = await embedder.embed([row["llm_text"] for row in pending])
    chunks: list[list[EmbeddedChunk]] = [
        await embed_chunks(row["llm_text"], embedder, window or ChunkWindow()) for row in pending
    ]
    filled = 0
    async with session_factory() as session, session.begin():
        for row, vector, embedded in zip(pending, vectors, chunks, strict=True):
            if await repository.store_embedding(session, row["id"], row["llm_text"], vector):
                await replace_chunks(session, row["owner_id"], row["id"], embedded)
                filled += 1
    log.info("embedded %d records that were stored without an embedding", filled)
    return filled


async def run_embedding_retries(
    session_factory: async_sessionmaker[AsyncSession],
    embedder: Embedder,
    interval_s: float,
    *,
    window: ChunkWindow | None = None,
) -> None:
    """Forever: retry pending embeddings, draining the backlog before sleeping again."""
    while True:
        try:
            while await embed_pending(session_factory, embedder, window=window):
                pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("embedding retry failed; next attempt in %.0f s", interval_s, exc_info=True)
        await asyncio.sleep(interval_s)
