"""Neighbour support: a semantic seed next to another relevant record counts for more.

A turn inside a relevant exchange is more likely to matter than an isolated match with
the same score: the question it answers, or the answer it asks for, is relevant too.
Each semantic seed gains ``weight`` times the best score among the semantic seeds it
shares a temporal edge with (capped at 1). Only first-hand scores are added — a seed's
own gain never feeds its neighbours' — and the seed's detail names the neighbour, so the
explanation says why its cost is lower than its search score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from uuid import UUID

from cairn.context.model import EdgeColumns, EdgeType, Graph, Seed
from cairn.context.sources.semantic import NAME as SEMANTIC


def with_neighbour_support(seeds: list[Seed], graph: Graph, weight: float) -> list[Seed]:
    """``seeds`` with each supported semantic seed's score raised (order unchanged)."""
    scores = {s.record_id: s.score for s in seeds if s.source == SEMANTIC}
    if weight <= 0 or len(scores) < 2:
        return seeds
    # record → (best neighbour score, its id as an int for a tie-break that does not
    # depend on the order of the edges, the neighbour)
    best: dict[UUID, tuple[float, int, UUID]] = {}
    for a, b in _temporal(graph.columns):
        if a == b or a not in scores or b not in scores:
            continue
        for me, other in ((a, b), (b, a)):
            candidate = (scores[other], other.int, other)
            if me not in best or candidate[:2] > best[me][:2]:
                best[me] = candidate
    supported: list[Seed] = []
    for seed in seeds:
        found = best.get(seed.record_id) if seed.source == SEMANTIC else None
        if found is None or seed.score >= 1.0:
            supported.append(seed)
            continue
        neighbour_score, _, neighbour = found
        score = min(1.0, seed.score + weight * neighbour_score)
        gain = f"+{score - seed.score:.3f} beside {neighbour}"
        detail = f"{seed.detail}; {gain}" if seed.detail else gain
        supported.append(dataclasses.replace(seed, score=score, detail=detail))
    return supported


def _temporal(edges: EdgeColumns) -> Iterator[tuple[UUID, UUID]]:
    """The ends of the temporal edges, in order, from the arrays (no ``Edge`` made)."""
    temporal = edges.kind == EdgeType.temporal
    name = edges.ids.__getitem__
    return zip(
        map(name, edges.near[temporal].tolist()),
        map(name, edges.far[temporal].tolist()),
        strict=True,
    )
