"""BatchingEmbedder batches concurrent callers; HashEmbedder is a faithful twin."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from cairn.embedding import EMBEDDING_DIM, BatchingEmbedder, HashEmbedder, hash_encode


class RecordingEncode:
    """A fake encode: row i is a one-hot at len(text) so results can be traced back."""

    def __init__(self, fail_first: int = 0) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self._fail_first = fail_first

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        self.threads.add(threading.current_thread().name)
        if len(self.batches) <= self._fail_first:
            raise ValueError("model exploded")
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, len(text) % EMBEDDING_DIM] = 1.0
        return out


def _expected(text: str) -> list[float]:
    vector = [0.0] * EMBEDDING_DIM
    vector[len(text) % EMBEDDING_DIM] = 1.0
    return vector


async def test_concurrent_callers_share_batches() -> None:
    encode = RecordingEncode()
    embedder = BatchingEmbedder(encode, max_batch=32, max_wait_ms=20)
    texts = ["x" * n for n in range(1, 51)]
    results = await asyncio.gather(*(embedder.embed([t]) for t in texts))
    await embedder.aclose()
    assert len(encode.batches) <= 3
    assert max(len(b) for b in encode.batches) <= 32
    assert [r[0] for r in results] == [_expected(t) for t in texts]


async def test_one_call_with_many_texts_keeps_order() -> None:
    encode = RecordingEncode()
    embedder = BatchingEmbedder(encode, max_batch=8, max_wait_ms=1)
    texts = ["y" * n for n in range(1, 21)]
    assert await embedder.embed(texts) == [_expected(t) for t in texts]
    assert [len(b) for b in encode.batches] == [8, 8, 4]
    await embedder.aclose()


async def test_encode_runs_off_the_event_loop_thread() -> None:
    encode = RecordingEncode()
    embedder = BatchingEmbedder(encode)
    await embedder.embed(["a"])
    await embedder.embed(["b"])
    await embedder.aclose()
    assert len(encode.threads) == 1
    assert threading.current_thread().name not in encode.threads


async def test_failure_reaches_every_caller_of_the_batch_and_the_next_batch_works() -> None:
    encode = RecordingEncode(fail_first=1)
    embedder = BatchingEmbedder(encode, max_batch=32, max_wait_ms=20)
    failed = await asyncio.gather(
        *(embedder.embed([f"text {i}"]) for i in range(5)), return_exceptions=True
    )
    assert len(encode.batches) == 1
    assert all(isinstance(r, ValueError) for r in failed)
    assert await embedder.embed(["again"]) == [_expected("again")]
    await embedder.aclose()


async def test_wrong_shape_from_encode_is_an_error_not_a_hang() -> None:
    embedder = BatchingEmbedder(lambda texts: np.zeros((1, 3), dtype=np.float32))
    with pytest.raises(RuntimeError, match="shape"):
        await embedder.embed(["a", "b"])
    await embedder.aclose()


async def test_cancelled_caller_does_not_break_the_batch() -> None:
    encode = RecordingEncode()
    embedder = BatchingEmbedder(encode, max_wait_ms=50)
    doomed = asyncio.ensure_future(embedder.embed(["gone"]))
    survivor = asyncio.ensure_future(embedder.embed(["kept"]))
    await asyncio.sleep(0)
    doomed.cancel()
    assert await survivor == [_expected("kept")]
    assert encode.batches == [["kept"]]
    await embedder.aclose()


async def test_empty_input_returns_without_encoding() -> None:
    encode = RecordingEncode()
    embedder = BatchingEmbedder(encode)
    assert await embedder.embed([]) == []
    assert encode.batches == []
    await embedder.aclose()


async def test_calls_after_close_raise() -> None:
    embedder = BatchingEmbedder(RecordingEncode())
    await embedder.embed(["warm"])
    await embedder.aclose()
    await embedder.aclose()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        await embedder.embed(["late"])


def _cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


async def test_hash_embedder_is_deterministic_and_unit_length() -> None:
    embedder = HashEmbedder()
    first, again = await embedder.embed(["Postgres vector search", "postgres VECTOR search"])
    assert first == again  # lowercased word tokens
    assert np.linalg.norm(first) == pytest.approx(1.0, abs=1e-6)
    assert len(first) == EMBEDDING_DIM


async def test_hash_embedder_texts_sharing_words_are_closer() -> None:
    query, related, unrelated = await HashEmbedder().embed(
        ["semantic vector search", "vector search with pgvector", "baking sourdough bread"]
    )
    assert _cosine(query, related) > 0.3
    assert _cosine(query, related) > _cosine(query, unrelated)


async def test_hash_embedder_empty_text_is_a_fixed_unit_vector() -> None:
    empty, punctuation = await HashEmbedder().embed(["", "  ...  "])
    assert empty == punctuation
    assert np.linalg.norm(empty) == pytest.approx(1.0, abs=1e-6)


async def test_hash_embedder_raises_after_close() -> None:
    embedder = HashEmbedder()
    await embedder.aclose()
    with pytest.raises(RuntimeError):
        await embedder.embed(["x"])


async def test_hash_encode_plugs_into_the_batching_embedder() -> None:
    embedder = BatchingEmbedder(hash_encode)
    (vector,) = await embedder.embed(["hello world"])
    await embedder.aclose()
    assert vector == hash_encode(["hello world"])[0].tolist()
