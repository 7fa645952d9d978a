"""Unlabelled candidates of an isolating assembly, judged as its trigger is.

A record the definition's words and examples leave unlabelled, and whose nearest labelled
records do not agree on a domain at write time (context.neighbours'
``NEIGHBOUR_LABEL_FLOOR``), is stored without labels; the contract was that such a record is
never isolated. On the isolation benchmark those records were most of what still leaked
into isolating contexts (a billing bug note in a question about a blood test; a tea
brewing note in one about coffee at home): no label said where they belonged.

An isolating assembly therefore judges each unlabelled candidate — from every source and
from the graph walk — by the evidence its trigger gets when the words and examples do not
place it: the direct scores (words, examples; tags were read at write time) combined with
the votes of its :data:`~cairn.context.neighbours.NEIGHBOURS` nearest labelled records. The
difference is where the neighbours come from: the trigger asks the embedding index; a
candidate is compared with the labelled records the assembly already holds (the loaded
candidates, and those the sources and the walk left out as isolated, whose vectors and labels
come in one query for all of them). No query per candidate.

A candidate is left out as ``isolated_domain`` only when the verdict is confident — the
margin over the runner-up at least :data:`JUDGE_MARGIN` (and the trigger's own
``min_confidence``) and the domain's combined score at least :data:`JUDGE_FLOOR` — and its
domain is isolated from the trigger's. Uncertain records stay, as before: dropping knowledge
the tenant wrote costs more than showing a stray record. The explanation says why (the
domain, the margin, and the evidence).

A trigger whose domain is isolated from every other (``isolated_from: ["*"]``) asks for
more: only its own records. There an unlabelled candidate stays only when its verdict — the
same evidence, the best score, no margin asked — is the trigger's domain; the uncertain ones
the rule above keeps (a general note whose neighbours split, one nothing places) are left
out too, and say so (``unlabelled, not judged personal …``). On the isolation benchmark
these were what still leaked into personal contexts at 1000 tokens, and no personal record
was among those it left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cairn.context.domains import Classification, DomainSet
from cairn.context.neighbours import NEIGHBOUR_BASE, NEIGHBOUR_MASS, NEIGHBOURS, Neighbour

JUDGE_MARGIN = 0.3  # an unlabelled record is dropped only on a clear verdict
JUDGE_FLOOR = 0.4  # and only for a domain the evidence supports on its own
_SLACK = 0.01  # the matrix scores are not rounded as the one-by-one verdict's are


@dataclass(frozen=True, slots=True)
class Unlabelled:
    """A candidate without labels: its text (as it was labelled from) and unit vector."""

    record_id: uuid.UUID
    text: str
    vector: NDArray[np.float32] | None


@dataclass(frozen=True, slots=True)
class Pool:
    """Labelled records in hand: ``labels[i]`` for row ``i`` of ``unit`` (unit vectors)."""

    ids: tuple[uuid.UUID, ...]
    labels: tuple[tuple[str, ...], ...]
    unit: NDArray[np.float32]

    @classmethod
    def of(cls, rows: Mapping[uuid.UUID, tuple[tuple[str, ...], NDArray[np.float32]]]) -> Pool:
        ids = tuple(sorted(rows, key=lambda record_id: record_id.int))  # deterministic order
        if not ids:
            return cls((), (), np.zeros((0, 1), dtype=np.float32))
        return cls(
            ids,
            tuple(rows[record_id][0] for record_id in ids),
            np.stack([rows[record_id][1] for record_id in ids]),
        )


@dataclass(frozen=True, slots=True)
class Judged:
    record_id: uuid.UUID
    domain: str
    confidence: float
    evidence: str


def judge(
    domains: DomainSet,
    isolated: frozenset[str],
    candidates: Sequence[Unlabelled],
    pool: Pool,
    *,
    exclusive: str | None = None,
) -> list[Judged]:
    """The candidates confidently in one of the ``isolated`` domains, with the reason; and,
    when the trigger's domain ``exclusive`` is isolated from every other (``"*"``), every
    candidate not judged of that domain.

    Every candidate's scores come from a few matrix products (:func:`scores`); only those
    they show as possibly out are classified again one by one, exactly as a trigger is,
    for the decision and its evidence."""
    if not isolated or not candidates:
        return []
    names = domains.names
    found = scores(domains, candidates, pool)
    margin = max(JUDGE_MARGIN, domains.min_confidence)
    ranked = np.sort(found, axis=1)
    best = np.argmax(found, axis=1)  # the first of equals: names are in alphabetical order
    runner_up = ranked[:, -2] if len(names) > 1 else np.zeros(len(candidates))
    maybe = [
        n
        for n in range(len(candidates))
        if names[best[n]] in isolated
        and ranked[n, -1] - runner_up[n] >= margin - _SLACK
        and ranked[n, -1] >= JUDGE_FLOOR - _SLACK
    ]
    if exclusive is not None and exclusive in names:
        mine = names.index(exclusive)
        others = np.delete(found, mine, axis=1).max(axis=1, initial=0.0)
        clearly_mine = (found[:, mine] - others > _SLACK) & (found[:, mine] > _SLACK)
        maybe = [n for n in range(len(candidates)) if not clearly_mine[n]]
    if not maybe:
        return []
    chosen = [candidates[n] for n in maybe]
    out: list[Judged] = []
    for candidate, neighbours in zip(chosen, _nearest(chosen, pool), strict=True):
        verdict = verdict_of(domains, candidate, neighbours)
        if dropped(domains, isolated, verdict):
            assert verdict.domain is not None
            out.append(
                Judged(candidate.record_id, verdict.domain, verdict.confidence, _why(verdict))
            )
        elif exclusive is not None and verdict.domain != exclusive:
            why = _not_mine(verdict, exclusive)
            out.append(Judged(candidate.record_id, verdict.domain or "", 0.0, why))
    return out


def scores(domains: DomainSet, candidates: Sequence[Unlabelled], pool: Pool) -> np.ndarray:
    """Each candidate's combined score per domain (a row per candidate, a column per name of
    ``domains``): the content scores with the votes of its nearest records in ``pool``,
    computed as context.neighbours does one at a time."""
    unit = _rows(candidates, pool.unit.shape[1] if pool.ids else _dims(candidates))
    direct = domains.content_scores([c.text for c in candidates], unit)
    if not pool.ids:
        return direct
    names = {name: column for column, name in enumerate(domains.names)}
    labels = np.zeros((len(pool.ids), len(names)), dtype=np.float32)
    for row, found in enumerate(pool.labels):
        known = [names[label] for label in found if label in names]
        for column in known:
            labels[row, column] += 1.0 / len(known)
    similarity = unit @ pool.unit.T
    take = min(NEIGHBOURS, len(pool.ids))
    top = np.argpartition(-similarity, take - 1, axis=1)[:, :take]
    weight = np.maximum(np.take_along_axis(similarity, top, axis=1) - NEIGHBOUR_BASE, 0.0)
    weight[~np.any(unit != 0.0, axis=1)] = 0.0  # no vector: no neighbours
    by_domain = np.einsum("nt,ntk->nk", weight, labels[top])
    total = by_domain.sum(axis=1, keepdims=True)
    strength = np.minimum(1.0, total / NEIGHBOUR_MASS)
    votes = np.divide(by_domain * strength, total, out=np.zeros_like(by_domain), where=total > 0)
    result: np.ndarray = 1.0 - (1.0 - direct) * (1.0 - votes)
    return result


def verdict_of(
    domains: DomainSet, candidate: Unlabelled, neighbours: Sequence[Neighbour]
) -> Classification:
    """The trigger's classification, applied to a candidate: direct scores, then votes."""
    vector = None if candidate.vector is None else candidate.vector.tolist()
    return domains.with_neighbours(domains.classify(candidate.text, (), vector), neighbours)


def dropped(domains: DomainSet, isolated: frozenset[str], verdict: Classification) -> bool:
    """Confident, supported, and in a domain the assembly isolates."""
    if verdict.domain is None or verdict.domain not in isolated:
        return False
    margin = max(JUDGE_MARGIN, domains.min_confidence)
    return verdict.confidence >= margin and verdict.scores[verdict.domain] >= JUDGE_FLOOR


def _nearest(candidates: Sequence[Unlabelled], pool: Pool) -> list[list[Neighbour]]:
    """Each candidate's :data:`NEIGHBOURS` nearest records of the pool (one product)."""
    if not pool.ids:
        return [[] for _ in candidates]
    similarity = _rows(candidates, pool.unit.shape[1]) @ pool.unit.T
    take = min(NEIGHBOURS, len(pool.ids))
    out: list[list[Neighbour]] = []
    for n, candidate in enumerate(candidates):
        if candidate.vector is None:
            out.append([])
            continue
        order = np.argsort(-similarity[n], kind="stable")[:take]
        out.append(
            [Neighbour(str(pool.ids[i]), float(similarity[n, i]), pool.labels[i]) for i in order]
        )
    return out


def _not_mine(verdict: Classification, exclusive: str) -> str:
    best = verdict.domain or "no domain"
    return (
        f"unlabelled, not judged {exclusive} (isolated from every domain): judged {best}"
        f" ({exclusive} {verdict.scores.get(exclusive, 0.0):.3f},"
        f" {best} {verdict.scores.get(best, 0.0):.3f})"
    )


def _rows(candidates: Sequence[Unlabelled], dims: int) -> NDArray[np.float32]:
    """The candidates' unit vectors as rows; a zero row for one without (or of another
    size)."""
    rows = np.zeros((len(candidates), dims), dtype=np.float32)
    for n, candidate in enumerate(candidates):
        if candidate.vector is not None and candidate.vector.shape == (dims,):
            rows[n] = candidate.vector
    return rows


def _dims(candidates: Sequence[Unlabelled]) -> int:
    return next((c.vector.shape[0] for c in candidates if c.vector is not None), 1)


def _why(verdict: Classification) -> str:
    assert verdict.domain is not None
    found = ", ".join(verdict.evidence.get(verdict.domain, ())) or "its scores"
    return (
        f"unlabelled, judged {verdict.domain} by {found}"
        f" (score {verdict.scores[verdict.domain]:.3f}, margin {verdict.confidence:.3f})"
    )
