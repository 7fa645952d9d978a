"""Splitting long texts into overlapping windows (no database, no model)."""

from __future__ import annotations

import pytest
from tests.factories import long_note

from cairn.breadcrumbs.chunks import ChunkWindow, embed_chunks, split_chunks
from cairn.config import EmbeddingSettings
from cairn.embedding import HashEmbedder
from cairn.embedding.spans import word_spans

WINDOW = ChunkWindow(tokens=20, overlap=5, limit=30)


def test_a_text_within_the_limit_has_no_chunks() -> None:
    text = " ".join(f"w{i}" for i in range(30))
    assert split_chunks(text, word_spans(text), WINDOW) == []


def test_windows_overlap_and_cover_the_whole_text() -> None:
    text = " ".join(f"w{i}" for i in range(61))
    chunks = split_chunks(text, word_spans(text), WINDOW)
    words = [chunk.text.split() for chunk in chunks]
    assert [w[0] for w in words] == ["w0", "w15", "w30", "w41"]  # the last ends with the text
    assert all(len(w) == 20 for w in words) and words[-1][-1] == "w60"
    assert all(text[c.start : c.end] == c.text for c in chunks)
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3]


def test_a_window_starting_mid_word_widens_to_the_whole_word() -> None:
    text = "alpha " + " ".join("beta" for _ in range(40))
    spans = [(0, 2), (2, 5), *word_spans(text)[1:]]  # "alpha" as two word-pieces
    chunks = split_chunks(text, spans, ChunkWindow(tokens=10, overlap=9, limit=30))
    assert spans[1][0] == 2 and chunks[1].start == 0  # the second piece of "alpha" starts it
    assert all(c.start == 0 or text[c.start - 1] == " " for c in chunks)


def test_the_window_follows_the_settings() -> None:
    window = ChunkWindow.of(EmbeddingSettings(chunk_tokens=128, chunk_overlap=32, max_tokens=200))
    assert window == ChunkWindow(tokens=128, overlap=32, limit=198)


@pytest.mark.parametrize(
    ("tokens", "overlap", "max_tokens"), [(255, 50, 256), (100, 100, 256), (600, 10, 1024)]
)
def test_windows_that_cannot_work_are_refused(tokens: int, overlap: int, max_tokens: int) -> None:
    with pytest.raises(ValueError):
        EmbeddingSettings(chunk_tokens=tokens, chunk_overlap=overlap, max_tokens=max_tokens)


async def test_the_in_memory_embedder_embeds_each_window() -> None:
    embedder = HashEmbedder()
    embedded = await embed_chunks(long_note(), embedder, WINDOW)
    assert len(embedded) > 3 and embedder.calls == 1
    assert all(len(e.embedding) == 384 for e in embedded)
    assert "kitchen" in embedded[-1].chunk.text and "kitchen" not in embedded[0].chunk.text
    assert await embed_chunks("short", embedder, WINDOW) == []
