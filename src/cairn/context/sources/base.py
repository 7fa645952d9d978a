"""The contract every seed source keeps: a name, a starting cost, and one query.

A source turns the trigger into seeds — records the search starts from, each with a score
in 0..1 — and, optionally, near misses the explanation names. Its seeds start the
pathfinder at ``cost.base + cost.span * (1 - score)``; its place in the registry
(``cairn.context.sources.SOURCES``) breaks ties between equal costs and decides which seed
a record seeded twice keeps.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import Agent
from cairn.context.model import Seed
from cairn.context.signals import Signals
from cairn.context.terms import CommonWords
from cairn.context.trigger import AssemblyTrigger


@dataclass(frozen=True, slots=True)
class SeedCost:
    """Where a source's seeds start: ``base`` for a perfect score, plus ``span`` for a
    score of 0. Path costs are lower-is-closer (see context.pathfinder)."""

    base: float
    span: float

    def of(self, score: float) -> float:
        return self.base + self.span * (1.0 - score)


@dataclass(frozen=True, slots=True)
class SeedBatch:
    """A source's seeds, best first, and its near misses. Only ids and scores come back:
    the graph stage loads every record it keeps in one query, through the record cache."""

    seeds: list[Seed]
    below_threshold: list[tuple[uuid.UUID, float]] = field(default_factory=list)
    # Candidates the source found but left out: their domain is isolated from the trigger's.
    isolated: list[uuid.UUID] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SeedRequest:
    """What every source may read: the agent, the trigger and its keyword pointers and
    session tags, the blacklist, and the process's caches. ``similarity_scale`` scales the
    agent's ``min_similarity`` (RCRT's thresholds were set on inflated cosines); ``signals``
    are the trigger's (context.signals). A source may leave records of ``isolated`` domains
    out itself (and list them in its batch); the assembly drops any that remain."""

    session: AsyncSession
    agent: Agent
    trigger: AssemblyTrigger
    pointers: tuple[str, ...]
    sessions: tuple[str, ...]
    excluded: frozenset[str]
    common_words: CommonWords | None = None
    similarity_scale: float = 1.0
    signals: Signals = field(default_factory=Signals)
    # Domains isolated from the trigger's (context.domains): their records are no seeds.
    isolated: frozenset[str] = frozenset()

    @property
    def owner_id(self) -> uuid.UUID:
        return self.agent.owner_id


class SeedSourceKind(Protocol):
    """One seed source. ``name`` is what seeds, explanations and agent definitions call it."""

    @property
    def name(self) -> str: ...

    @property
    def cost(self) -> SeedCost: ...

    async def seeds(self, request: SeedRequest) -> SeedBatch: ...
