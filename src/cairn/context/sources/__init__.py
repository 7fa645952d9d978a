"""The seed sources, listed once, in rank order.

A source's place here is its tie-break rank: between two paths of equal cost, the one
starting from the earlier source wins, and a record seeded by two sources keeps the
earlier source's seed (the later is reported as a duplicate). Adding a source is one
module with a ``SOURCE`` that keeps :class:`SeedSourceKind`, its line here, and its
``context_sources.<name>`` entry in ``schemas/agent.def.v1.json``.
"""

from __future__ import annotations

from collections.abc import Mapping

from cairn.context.model import Seed
from cairn.context.sources import always, paths, semantic, session, signals, trigger
from cairn.context.sources.base import SeedBatch, SeedCost, SeedRequest, SeedSourceKind

SOURCES: tuple[SeedSourceKind, ...] = (
    trigger.SOURCE,
    always.SOURCE,
    semantic.SOURCE,
    signals.SOURCE,
    session.SOURCE,
    paths.SOURCE,
)

RANK: Mapping[str, int] = {source.name: rank for rank, source in enumerate(SOURCES)}
NAMES: tuple[str, ...] = tuple(source.name for source in SOURCES)
_COSTS: Mapping[str, SeedCost] = {source.name: source.cost for source in SOURCES}


def rank_of(name: str) -> int:
    try:
        return RANK[name]
    except KeyError:
        raise ValueError(f"unknown seed source {name!r}; the sources are {NAMES}") from None


def seed_cost(seed: Seed) -> float:
    """Where the search starts from ``seed``: its source's base plus span * (1 - score)."""
    rank_of(seed.source)
    return _COSTS[seed.source].of(seed.score)


__all__ = [
    "NAMES",
    "RANK",
    "SOURCES",
    "SeedBatch",
    "SeedCost",
    "SeedRequest",
    "SeedSourceKind",
    "rank_of",
    "seed_cost",
]
