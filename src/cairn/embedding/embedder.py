"""The async embedding interface, its micro-batching implementation and an in-memory twin."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from prometheus_client import Counter, Histogram

from cairn.embedding.spans import Span, SpanFn, word_spans
from cairn.embedding.types import EMBEDDING_DIM
from cairn.tasks import stop_task, wait_set

logger = logging.getLogger(__name__)

EncodeFn = Callable[[list[str]], np.ndarray]

# How full the forward passes are under load, and how much of the time the encoder runs:
# ingest's breakdown (benchmarks/ingest.py) reads them from /metrics.
BATCH_SIZE = Histogram(
    "cairn_embedding_batch_size",
    "Texts per forward pass of the embedder",
    buckets=(1, 2, 4, 8, 16, 32, 64),
)
ENCODE_SECONDS = Counter(
    "cairn_embedding_encode_seconds", "Wall-clock seconds the embedder spent encoding"
)


class Embedder(Protocol):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order. Raises whatever encoding raised."""
        ...

    async def aclose(self) -> None: ...


@dataclass
class _Pending:
    text: str
    future: asyncio.Future[list[float]]
    enqueued_at: float


class BatchingEmbedder:
    """Micro-batches texts from concurrent callers onto one synchronous ``encode``.

    A background task (started on first use, on the running loop) takes up to
    ``max_batch`` texts, waiting at most ``max_wait_ms`` after the oldest one arrived, and
    runs ``encode`` in a single dedicated thread so the event loop never blocks. If
    ``encode`` raises, every caller of that batch gets the exception; the next batch runs
    as usual.
    """

    def __init__(
        self,
        encode: EncodeFn,
        *,
        max_batch: int = 32,
        max_wait_ms: float = 2.0,
        spans: SpanFn = word_spans,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._encode = encode
        self._spans = spans
        self._max_batch = max_batch
        self._max_wait = max(max_wait_ms, 0.0) / 1000.0
        self._pending: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-embed")
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._closed:
            raise RuntimeError("embedder is closed")
        if not texts:
            return []
        loop = self._ensure_started()
        now = loop.time()
        futures = [loop.create_future() for _ in texts]
        for text, future in zip(texts, futures, strict=True):
            self._pending.append(_Pending(text, future, now))
        self._wakeup.set()
        # return_exceptions: a failed batch fails several futures of this call; gathering
        # them all keeps asyncio from logging "exception was never retrieved".
        results = await asyncio.gather(*futures, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return [r for r in results if not isinstance(r, BaseException)]

    def token_spans(self, text: str) -> list[Span]:
        """Where the encoder's word-pieces of ``text`` are (``spans``, given by the factory)."""
        return self._spans(text)

    async def aclose(self) -> None:
        """Stop the batching task, fail whatever is still queued, and stop the thread."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            await stop_task(self._task)
        _fail(list(self._pending), RuntimeError("embedder is closed"))
        self._pending.clear()
        # Waits for an encode still running in the thread, without blocking the loop.
        await asyncio.to_thread(self._executor.shutdown, True)

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._task is None:
            self._task = loop.create_task(self._run(), name="cairn-embed-batcher")
        elif self._task.get_loop() is not loop:
            raise RuntimeError("BatchingEmbedder is bound to another event loop")
        return loop

    async def _run(self) -> None:
        while True:
            batch = await self._next_batch()
            try:
                await self._encode_batch(batch)
            except asyncio.CancelledError:
                _fail(batch, RuntimeError("embedder is closed"))
                raise
            except Exception as exc:  # a bug here must not strand the callers
                logger.exception("embedding batch failed unexpectedly")
                _fail(batch, exc)

    async def _next_batch(self) -> list[_Pending]:
        while not self._pending:
            self._wakeup.clear()
            await self._wakeup.wait()
        loop = asyncio.get_running_loop()
        deadline = self._pending[0].enqueued_at + self._max_wait
        while len(self._pending) < self._max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            self._wakeup.clear()
            await wait_set(self._wakeup, remaining)
        size = min(self._max_batch, len(self._pending))
        return [self._pending.popleft() for _ in range(size)]

    async def _encode_batch(self, batch: list[_Pending]) -> None:
        live = [item for item in batch if not item.future.done()]  # skip cancelled callers
        if not live:
            return
        texts = [item.text for item in live]
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            vectors = await loop.run_in_executor(self._executor, self._encode, texts)
        except Exception as exc:
            _fail(live, exc)
            return
        finally:
            ENCODE_SECONDS.inc(loop.time() - started)
        BATCH_SIZE.observe(len(texts))
        if vectors.shape != (len(texts), EMBEDDING_DIM):
            _fail(
                live, RuntimeError(f"encode returned shape {vectors.shape} for {len(texts)} texts")
            )
            return
        for item, vector in zip(live, vectors.tolist(), strict=True):
            if not item.future.done():
                item.future.set_result(vector)


def _fail(items: list[_Pending], exc: BaseException) -> None:
    for item in items:
        if not item.future.done():
            item.future.set_exception(exc)


_WORD = re.compile(r"[^\W_]+")


def hash_encode(texts: list[str]) -> np.ndarray:
    """Deterministic bag-of-words vectors by signed feature hashing, L2-normalised.

    Texts sharing words point in similar directions; a text without words gets a fixed unit
    vector, never a zero vector. Usable as the ``encode`` of a ``BatchingEmbedder``.
    """
    out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            out[row, digest % EMBEDDING_DIM] += 1.0 if (digest >> 32) & 1 else -1.0
        norm = float(np.linalg.norm(out[row]))
        if norm == 0.0:
            out[row] = 1.0 / np.sqrt(EMBEDDING_DIM)
        else:
            out[row] /= norm
    return out


class HashEmbedder:
    """The in-memory twin of the real embedder, for fast unit tests: no model, no thread."""

    def __init__(self) -> None:
        self.calls = 0
        self._closed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._closed:
            raise RuntimeError("embedder is closed")
        self.calls += 1
        return hash_encode(list(texts)).tolist() if texts else []

    def token_spans(self, text: str) -> list[Span]:
        return word_spans(text)

    async def aclose(self) -> None:
        self._closed = True
