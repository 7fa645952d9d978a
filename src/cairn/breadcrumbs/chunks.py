"""Chunks of long records: overlapping windows of ``llm_text`` with their own embeddings.

The encoder reads the first ``max_tokens`` word-pieces of a text (256 with [CLS] and [SEP]);
whatever follows is invisible to the record's embedding. A longer text is also cut into
windows of ``chunk_tokens`` word-pieces, each starting ``chunk_tokens - chunk_overlap``
after the previous one, so a passage cut by one window's edge sits whole in the next. The
default window, 128 word-pieces overlapping by 32, is the input length MiniLM was
fine-tuned on: one window is about one topic, where mean pooling over a longer one blurs
several together. On the long-record benchmark (benchmarks/quality/long_records.py) it
found 54 of 59 answers by vector search, against 53 for windows of 200 overlapping by 50,
for the same encoder work (the same share of overlap) and 45% more chunk storage. Both
stay far inside the encoder's 254 word-pieces even when the word fallback undercounts (a
rare word is several word-pieces).

Counting goes through the embedder's tokenizer when it has one
(:mod:`cairn.embedding.spans`), so the windows are the encoder's own word-pieces; the
in-memory twin counts words. Searches score a record by the best of its own vector and
its chunks' (``breadcrumbs.chunk_store``); the assembly may show the best chunks of a
record that does not fit whole (``context.snippets``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import chunk_store
from cairn.config import EmbeddingSettings
from cairn.embedding import Embedder
from cairn.embedding.spans import Span, token_spans_of

MAX_WIDENING = 40  # characters a window may grow by to start and end on whole words


@dataclass(frozen=True, slots=True)
class ChunkWindow:
    """``limit``: the most word-pieces a text may have and still need no chunks."""

    tokens: int = 128
    overlap: int = 32
    limit: int = 254

    @classmethod
    def of(cls, settings: EmbeddingSettings) -> ChunkWindow:
        return cls(settings.chunk_tokens, settings.chunk_overlap, settings.max_tokens - 2)


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    start: int  # character offsets in llm_text, end exclusive
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class EmbeddedChunk:
    chunk: Chunk
    embedding: list[float]


def split_chunks(text: str, spans: Sequence[Span], window: ChunkWindow) -> list[Chunk]:
    """The windows of a text longer than ``window.limit`` word-pieces; none for a shorter
    one. Each window is widened to whole words (a word-piece may start mid-word); the last
    one ends with the text and overlaps its predecessor by whatever that takes."""
    if len(spans) <= window.limit:
        return []
    step = window.tokens - window.overlap
    chunks: list[Chunk] = []
    first = 0
    while True:
        first = min(first, len(spans) - window.tokens)  # the last window is a whole one too
        last = first + window.tokens - 1
        start, end = _word_start(text, spans[first][0]), _word_end(text, spans[last][1])
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if last == len(spans) - 1:
            return chunks
        first += step


def cut_chunks(llm_text: str | None, embedder: Embedder, window: ChunkWindow) -> list[Chunk]:
    """The windows of a text (none for a short one), counted, not embedded."""
    if not llm_text or len(llm_text) <= window.limit:  # a word-piece spans one character or more
        return []
    return split_chunks(llm_text, token_spans_of(embedder, llm_text), window)


async def embed_cut(chunks: Sequence[Chunk], embedder: Embedder) -> list[EmbeddedChunk]:
    """Chunks with their vectors (one embedder call). Raises whatever the embedder raised."""
    if not chunks:
        return []
    vectors = await embedder.embed([chunk.text for chunk in chunks])
    return [EmbeddedChunk(c, v) for c, v in zip(chunks, vectors, strict=True)]


async def embed_chunks(
    llm_text: str | None, embedder: Embedder, window: ChunkWindow
) -> list[EmbeddedChunk]:
    """The chunks of a text with their vectors (none for a short text)."""
    return await embed_cut(cut_chunks(llm_text, embedder, window), embedder)


async def replace_chunks(
    session: AsyncSession,
    owner_id: uuid.UUID,
    record_id: uuid.UUID,
    embedded: Sequence[EmbeddedChunk],
) -> None:
    """Store already embedded chunks in place of the record's old ones (none: drop them)."""
    await chunk_store.delete_chunks(session, owner_id, record_id)
    await chunk_store.insert_chunks(session, owner_id, record_id, embedded)


def _word_start(text: str, at: int) -> int:
    floor = max(at - MAX_WIDENING, 0)  # a text without spaces is cut where the pieces are
    while at > floor and not text[at - 1].isspace():
        at -= 1
    return at


def _word_end(text: str, at: int) -> int:
    ceiling = min(at + MAX_WIDENING, len(text))
    while at < ceiling and not text[at].isspace():
        at += 1
    return at
