"""The contract every seed source keeps: a name, a starting cost, and one query.

A source turns the trigger into seeds — records the search starts from, each with a score
in 0..1 — and, optionally, near misses the explanation names. Its seeds start the
pathfinder at ``cost.base + cost.span * (1 - score)``; its place in the registry
(``cairn.context.sources.SOURCES``) breaks ties between equal costs and decides which seed
a record seeded twice keeps.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import TextClause

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


Rows = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class SeedQuery:
    """A source's seeds as one SELECT: the seed stage sends every source's in ONE statement
    (``cairn.context.sources.gather``). ``read`` makes the batch from its rows, best first
    as the query orders them; ``ids``: the columns holding record ids."""

    sql: str
    params: Mapping[str, Any]
    read: Callable[[Rows], SeedBatch]
    ids: tuple[str, ...] = ("id",)


@dataclass(frozen=True, slots=True)
class Along:
    """A later stage's query sent in the seed stage's statement, to save its round trip:
    its rows, as JSON, go to ``read`` (it is not sent when the seed stage sends no
    statement of its own, and then ``read`` is not called)."""

    sql: str
    params: Mapping[str, Any]
    read: Callable[[Rows], None]


class SeedSourceKind(Protocol):
    """One seed source. ``name`` is what seeds, explanations and agent definitions call it.
    ``query``: its seeds as a query, or the batch itself when it needs none."""

    @property
    def name(self) -> str: ...

    @property
    def cost(self) -> SeedCost: ...

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch: ...

    async def seeds(self, request: SeedRequest) -> SeedBatch: ...


async def run_alone(session: AsyncSession, query: SeedQuery | SeedBatch) -> SeedBatch:
    """One source's query on its own (the seed stage sends them together)."""
    if isinstance(query, SeedBatch):
        return query
    rows = (await session.execute(text(query.sql), dict(query.params))).mappings().all()
    return query.read([dict(row) for row in rows])


# How ``text()`` finds a named parameter (sqlalchemy.sql.elements.TextClause).
_PARAMETER = TextClause._bind_params_regex


def namespaced(query: SeedQuery | Along, prefix: str) -> tuple[str, dict[str, Any]]:
    """The query's SQL and parameters with every parameter name prefixed, so that several
    queries share one statement without their parameters colliding."""
    params = {f"{prefix}{name}": value for name, value in query.params.items()}
    return _prefixed(query.sql, prefix), params


@functools.lru_cache(maxsize=1024)
def _prefixed(sql: str, prefix: str) -> str:
    """A source's SQL depends on the agent's settings, not on the trigger: the same few
    texts recur in every assembly, and a regex pass over several kB is not free."""
    return _PARAMETER.sub(lambda m: f":{prefix}{m.group(1)}", sql)
