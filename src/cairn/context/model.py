"""The context builder's vocabulary: plain, immutable data shared by every stage.

The DB side produces ``Record``, ``Seed``, ``Edge`` and ``Graph``; the pure core turns them
into a ``Selection`` (pathfinder), a ``Rendered`` text (render) and an explanation (explain).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from itertools import repeat
from typing import Any, NamedTuple, overload
from uuid import UUID

import numpy as np
from numpy.typing import NDArray

SESSION_PREFIX = "session:"


@dataclass(frozen=True, slots=True)
class Record:
    """One breadcrumb as the context builder needs it (no embedding, no bookkeeping)."""

    id: UUID
    owner_id: UUID
    schema_name: str | None
    title: str
    tags: tuple[str, ...]
    context: dict[str, Any]
    llm_hints: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    version: int | None = None  # lets the transforms cache compiled instance hints
    domains: tuple[str, ...] = ()  # stored domain labels (context.domains)

    @property
    def session_tags(self) -> frozenset[str]:
        """The record's ``session:*`` tags (a record may belong to several sessions)."""
        return frozenset(tag for tag in self.tags if tag.startswith(SESSION_PREFIX))


# The source every assembly's trigger is seeded by. The others are listed, in tie-break
# order, in context.sources (one module each); a seed names its source by its name.
TRIGGER_SOURCE = "trigger"


@dataclass(frozen=True, slots=True)
class Seed:
    """A starting point of the search, from the source named ``source`` (context.sources).
    ``score`` is in 0..1, higher is better: similarity for semantic seeds, recency for
    session seeds (1.0 = newest), 1.0 for the trigger."""

    record_id: UUID
    source: str
    score: float = 1.0
    detail: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"seed score must be in 0..1, got {self.score!r}")


class EdgeType(IntEnum):
    """Stored as ``breadcrumb_edges.edge_type`` (smallint)."""

    causal = 0
    temporal = 1
    tag = 2
    semantic = 3


class Edge(NamedTuple):
    """A directed edge; the search walks it both ways. For semantic edges ``weight`` is the
    cosine similarity. (A named tuple: assemblies load thousands, and making a frozen
    dataclass costs several times more.)"""

    from_id: UUID
    to_id: UUID
    edge_type: EdgeType
    weight: float = 1.0


EDGE_TYPES = {kind.value: kind for kind in EdgeType}


class EdgeColumns(Sequence[Edge]):
    """Edges as arrays, the form the in-memory walk finds them in: edge ``i`` runs from
    ``ids[near[i]]`` to ``ids[far[i]]``, its type's value is ``kind[i]`` and its weight
    ``weight[i]``. The pathfinder and the neighbour support read the arrays (~1,000 edges
    among an assembly's ~200 records); iterating makes the ``Edge``s, once."""

    __slots__ = ("_edges", "far", "ids", "kind", "near", "weight")

    def __init__(
        self,
        ids: Sequence[UUID],
        near: NDArray[np.intp],
        far: NDArray[np.intp],
        kind: NDArray[np.int8],
        weight: NDArray[np.floating[Any]],
    ) -> None:
        self.ids, self.near, self.far, self.kind, self.weight = ids, near, far, kind, weight
        self._edges: tuple[Edge, ...] | None = None

    @classmethod
    def of(cls, edges: Iterable[Edge]) -> EdgeColumns:
        """The arrays of these edges (an edge read by SQL, or written by hand); iterating
        gives the same tuples back."""
        made = tuple(edges)
        place: dict[UUID, int] = {}
        near = [place.setdefault(edge.from_id, len(place)) for edge in made]
        far = [place.setdefault(edge.to_id, len(place)) for edge in made]
        columns = cls(
            list(place), np.array(near, np.intp), np.array(far, np.intp),
            np.array([edge.edge_type for edge in made], np.int8),
            np.array([edge.weight for edge in made], np.float64),
        )  # fmt: skip
        columns._edges = made
        return columns

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EdgeColumns):
            return NotImplemented
        return self.edges() == other.edges()

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.near)

    @overload
    def __getitem__(self, index: int) -> Edge: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Edge, ...]: ...

    def __getitem__(self, index: int | slice) -> Edge | tuple[Edge, ...]:
        return self.edges()[index]

    def __iter__(self) -> Iterator[Edge]:
        return iter(self.edges())

    def edges(self) -> tuple[Edge, ...]:
        if self._edges is None:
            # Made in C loops (map, tuple.__new__), not by the named tuple's Python
            # constructor; the ends are the ids given, not new UUIDs.
            name = self.ids.__getitem__
            columns = zip(
                map(name, self.near.tolist()), map(name, self.far.tolist()),
                map(EDGE_TYPES.__getitem__, self.kind.tolist()), self.weight.tolist(),
                strict=True,
            )  # fmt: skip
            self._edges = tuple(map(tuple.__new__, repeat(Edge), columns))
        return self._edges


@dataclass(frozen=True, slots=True)
class Graph:
    """The loaded neighbourhood of the seeds. Edges whose far end is not in ``records`` are
    kept but never walked (the record is not loaded, so it cannot be rendered)."""

    records: dict[UUID, Record]
    edges: Sequence[Edge] = ()  # held as EdgeColumns (other edges given are made into them)
    # Records the walk reached but left out: their domain is isolated from the trigger's.
    isolated: tuple[UUID, ...] = ()
    _adjacency: dict[UUID, list[tuple[UUID, Edge]]] | None = field(
        init=False, repr=False, compare=False, default=None
    )

    def __post_init__(self) -> None:
        if not isinstance(self.edges, EdgeColumns):
            object.__setattr__(self, "edges", EdgeColumns.of(self.edges))

    @property
    def columns(self) -> EdgeColumns:
        """The edges as arrays (always: see ``__post_init__``)."""
        assert isinstance(self.edges, EdgeColumns)
        return self.edges

    def neighbours(self, record_id: UUID) -> list[tuple[UUID, Edge]]:
        """Every loaded record one edge away, over outgoing and incoming edges alike."""
        if self._adjacency is None:  # built on first use: the pathfinder has its own
            adjacency: dict[UUID, list[tuple[UUID, Edge]]] = {}
            for edge in self.edges:
                if edge.from_id == edge.to_id:
                    continue
                adjacency.setdefault(edge.from_id, []).append((edge.to_id, edge))
                adjacency.setdefault(edge.to_id, []).append((edge.from_id, edge))
            object.__setattr__(self, "_adjacency", adjacency)
        assert self._adjacency is not None
        return [
            (other, edge)
            for other, edge in self._adjacency.get(record_id, ())
            if other in self.records
        ]


class Section(StrEnum):
    """Sections of ``formatted_context``, in rendering order."""

    tools = "tools"
    knowledge = "knowledge"
    prior_fixes = "prior_fixes"  # resolved debug paths, for agents with the paths source
    history = "history"
    additional = "additional"
    trigger = "trigger"


SECTION_ORDER: tuple[Section, ...] = tuple(Section)


class BudgetSource(StrEnum):
    """Which setting decided the token budget (ARCHITECTURE §7.5, in order of precedence)."""

    request = "request"  # an on-demand request's own budget (POST /contexts/query)
    agent = "agent"
    llm_config = "llm_config"
    model = "model"
    default = "default"


@dataclass(frozen=True, slots=True)
class Budget:
    tokens: int
    source: BudgetSource


class DropReason(StrEnum):
    """Why a candidate is not in the context. ``not_loaded`` (a seed whose record is missing
    from the graph, e.g. deleted in between) and ``unreachable`` (a loaded record no path
    reaches) point at the loading stages rather than at selection; ``isolated_domain``: the
    record's domain is isolated from the trigger's (context.domains). ``duplicate`` is a
    record seeded twice; ``duplicate_content`` one whose embedding is nearly that of a
    record already in the context (context.ranking)."""

    over_budget = "over_budget"
    max_nodes = "max_nodes"
    blacklisted = "blacklisted"
    duplicate = "duplicate"
    below_threshold = "below_threshold"
    not_loaded = "not_loaded"
    unreachable = "unreachable"
    isolated_domain = "isolated_domain"
    no_section = "no_section"  # the agent has sections and none matches the record
    sections_full = "sections_full"  # its section's items or tokens are spent
    duplicate_content = "duplicate_content"


@dataclass(frozen=True, slots=True)
class Selected:
    """A record taken by the search. ``source`` is the source of the seed the winning path
    starts from; ``hops`` 0 means the record is that seed itself; ``via`` is the predecessor
    on the path. ``seed_score`` is the record's own best seed score, if it is a seed."""

    record_id: UUID
    source: str
    seed_score: float | None
    path_cost: float
    tokens: int
    via: UUID | None
    hops: int


@dataclass(frozen=True, slots=True)
class Dropped:
    """``duplicate_of``: for ``duplicate_content``, the record in the context it repeats."""

    record_id: UUID
    reason: DropReason
    tokens: int | None = None
    path_cost: float | None = None
    duplicate_of: UUID | None = None
    evidence: str | None = None  # why, where a judgement left it out (context.judge)


@dataclass(frozen=True, slots=True)
class Selection:
    """The search's result. ``selected`` is in selection order, which is also priority
    order; ``tokens_used`` includes ``fixed_overhead``."""

    selected: list[Selected]
    dropped: list[Dropped]
    budget_tokens: int
    fixed_overhead: int
    tokens_used: int
    trigger_over_budget: bool = False

    @property
    def trigger_id(self) -> UUID | None:
        """The selected trigger record, if any."""
        for item in self.selected:
            if item.source == TRIGGER_SOURCE and item.hops == 0:
                return item.record_id
        return None


@dataclass(frozen=True, slots=True)
class RenderedItem:
    record_id: UUID
    section: Section | str  # an agent's own section, by name, when it has sections
    tokens: int


@dataclass(frozen=True, slots=True)
class Rendered:
    """``formatted_context`` and its exact token count (≤ the budget). ``items`` are in text
    order; ``trimmed`` are selected records dropped to get the exact count under budget."""

    text: str
    token_count: int
    items: list[RenderedItem]
    trimmed: list[UUID]
