"""Ranking beyond path cost (agent option ``ranking``): near-duplicates and MMR.

Both compare candidates by the cosine similarity of their stored embeddings, which the
graph stage's record loading puts in the record cache (context.records, pgvector's
binary form read by numpy without a Python float per component); those it does not hold
come in one query. One matrix product then gives every pair's similarity.

- Near-duplicates: pairs at least ``duplicate_similarity`` similar. The pathfinder takes
  the first of a pair it reaches (the cheaper path) and leaves out the other while the
  first is in the context (``duplicate_content``, ``duplicate_of`` in the explanation).
- MMR: the pathfinder offers records to the budget in the greedy order of maximal
  marginal relevance, each next record being

      argmax over d in R \\ S of  λ · (1 - cost(d)) - (1 - λ) · max over s in S of cos(d, s)

  where R is every record the search reached, cost(d) its cheapest path cost (for a
  semantic seed, 1 - its similarity to the trigger), and S the records already taken
  into the context. A record offered but too large for what is left of the budget does
  not join S. λ = 1 is path-cost order; lower λ favours records unlike those taken.

The trigger takes no part: it is shown in its own section whatever it resembles, and a
record like the trigger is relevant, not redundant.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from threadpoolctl import threadpool_limits

from cairn.context.agents import Ranking
from cairn.context.model import Record
from cairn.context.pathfinder import Picker
from cairn.context.records import RecordCache, cached_vectors, unit_vector

_EMBEDDINGS = text(
    "SELECT id, version, vector_send(embedding) AS vector FROM breadcrumbs"
    " WHERE owner_id = :owner AND id = ANY(:ids) AND embedding IS NOT NULL"
)


def single_threaded_blas() -> None:
    """One BLAS thread for the process (called once, where the context builder is made).
    The products here are small — a few hundred vectors — and OpenBLAS's extra threads
    spin waiting for work: on two cores shared with PostgreSQL, the rank stage took 8 ms
    of CPU per assembly with them and 1 ms without (250 candidates)."""
    threadpool_limits(1, user_api="blas")


@dataclass(frozen=True, slots=True)
class Embeddings:
    """Unit vectors (rows of ``unit``) of the records in ``index``; a record without a
    stored embedding is absent and resembles nothing."""

    index: dict[uuid.UUID, int]
    unit: NDArray[np.float32]

    def rows(self, ids: Sequence[uuid.UUID]) -> NDArray[np.float32]:
        """A matrix with a row per id, zeros for the ids absent here."""
        rows = np.zeros((len(ids), self.unit.shape[1]), dtype=np.float32)
        for position, record_id in enumerate(ids):
            row = self.index.get(record_id)
            if row is not None:
                rows[position] = self.unit[row]
        return rows


async def load_embeddings(
    session: AsyncSession,
    owner_id: uuid.UUID,
    records: Iterable[Record],
    cache: RecordCache | None = None,
) -> Embeddings:
    """The records' embeddings: from the cache (filled as the graph stage loads records)
    where it holds them at the record's version, the rest in one query."""
    vectors, missing = cached_vectors(records, cache)
    if missing:
        rows = await session.execute(_EMBEDDINGS, {"owner": owner_id, "ids": missing})
        for record_id, version, sent in rows.all():
            vectors[record_id] = unit_vector(sent)
            if cache is not None:
                cache.put_vector(record_id, version, vectors[record_id])
    if not vectors:
        return Embeddings({}, np.zeros((0, 1), dtype=np.float32))
    ids = sorted(vectors, key=lambda record_id: record_id.int)  # a deterministic row order
    return Embeddings(
        {record_id: n for n, record_id in enumerate(ids)},
        np.stack([vectors[record_id] for record_id in ids]),
    )


def near_duplicates(
    embeddings: Embeddings, threshold: float
) -> dict[uuid.UUID, tuple[uuid.UUID, ...]]:
    """Each record's near-duplicates (similarity ≥ ``threshold``), most similar first
    (ties in row order, which is id order)."""
    ids = list(embeddings.index)
    if len(ids) < 2:
        return {}
    similarity = embeddings.unit @ embeddings.unit.T
    np.fill_diagonal(similarity, -1.0)
    rows, columns = np.nonzero(similarity >= np.float32(threshold))
    if not len(rows):
        return {}
    order = np.lexsort((columns, -similarity[rows, columns], rows))
    rows, columns = rows[order], columns[order]
    starts = np.flatnonzero(np.diff(rows, prepend=-1))
    return {
        ids[rows[start]]: tuple(ids[c] for c in group)
        for start, group in zip(starts, np.split(columns, starts[1:]), strict=True)
    }


@dataclass(slots=True)
class MaximalMarginalRelevance:
    """The greedy MMR order (module docstring) as a pathfinder ``Picker``. Scores change
    only when a record is taken, so the open records are sorted once per take and offered
    in that order until the next (the same order as an argmax per step, at a cost per
    record taken rather than per record offered). A record without an embedding resembles
    nothing: taking it changes no score."""

    embeddings: Embeddings
    weight: float  # λ
    _relevance: NDArray[np.float64] = field(init=False)
    _redundancy: NDArray[np.float64] | None = field(init=False)  # None: nothing taken yet
    _vectors: NDArray[np.float32] = field(init=False)
    _present: set[int] = field(init=False)
    _open: NDArray[np.bool_] = field(init=False)
    _queue: list[int] = field(init=False)
    _at: int = field(init=False)

    def begin(self, paths: Sequence[tuple[uuid.UUID, float]]) -> None:
        costs = np.array([cost for _, cost in paths], dtype=np.float64)
        self._relevance = self.weight * (1.0 - costs)
        self._redundancy = None
        ids = [node for node, _ in paths]
        self._vectors = self.embeddings.rows(ids)
        self._present = {n for n, node in enumerate(ids) if node in self.embeddings.index}
        self._open = np.ones(len(paths), dtype=np.bool_)
        self._queue = self._order()
        self._at = 0

    def pick(self) -> int | None:
        while self._at < len(self._queue):
            index = self._queue[self._at]
            self._at += 1
            if self._open[index]:
                self._open[index] = False
                return index
        return None

    def taken(self, index: int) -> None:
        if index not in self._present:
            return
        similarity = (self._vectors @ self._vectors[index]).astype(np.float64)
        if self._redundancy is None:
            self._redundancy = similarity
        else:
            np.maximum(self._redundancy, similarity, out=self._redundancy)
        self._queue = self._order()
        self._at = 0

    def _order(self) -> list[int]:
        """The open records by score, best first; ties in path order (a stable sort)."""
        open_ = np.flatnonzero(self._open)
        scores = self._relevance[open_]
        if self._redundancy is not None:
            scores = scores - (1.0 - self.weight) * self._redundancy[open_]
        return [int(i) for i in open_[np.argsort(-scores, kind="stable")]]


@dataclass(frozen=True, slots=True)
class Ranked:
    """What the pathfinder needs from this stage."""

    duplicates: dict[uuid.UUID, tuple[uuid.UUID, ...]] = field(default_factory=dict)
    picker: Picker | None = None


async def rank(
    session: AsyncSession,
    owner_id: uuid.UUID,
    candidates: Iterable[Record],
    options: Ranking,
    cache: RecordCache | None = None,
) -> Ranked:
    """Near-duplicates among ``candidates`` (the trigger left out) and the MMR picker, as
    ``options`` ask; nothing is loaded when they ask for neither."""
    if not options.compares_content:
        return Ranked()
    embeddings = await load_embeddings(session, owner_id, candidates, cache)
    threshold, weight = options.duplicate_similarity, options.mmr_lambda
    return Ranked(
        duplicates={} if threshold is None else near_duplicates(embeddings, threshold),
        picker=None if weight is None else MaximalMarginalRelevance(embeddings, weight),
    )
