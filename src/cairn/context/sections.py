"""Agent sections (``sections`` of ``agent.def.v1``): each candidate goes to the first section
whose match it satisfies, and each section spends its own allocation of the budget.

Allocations come in declaration order, which is also the sections' priority: a section's
``max_tokens``, or its ``share`` of the budget, as far as what is left allows; the sections
that ask for neither split the rest equally. A section takes its candidates in priority
order (the pathfinder's path-cost order) while they fit what it may spend and it holds
fewer than its ``max_items`` (which ``complexity_limits`` overrides for the assembly's
tier). What a section leaves unused flows on to the sections after it; what is still unused
after the last is offered once more to every section in order, so no candidate that would
fit the unused budget is left out. ``max_tokens`` is a ceiling as well as an allocation:
nothing flows into a section beyond it. A candidate that matches no section is left out as
``no_section`` (by the caller); one its section cannot hold, as ``sections_full``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from cairn.context.model import Record
from cairn.errors import InvalidInput

DEFAULT_HEADING = "## Context (Computed)"
TIERS = ("easy", "normal", "complex")
ORDERS = ("relevance", "newest", "oldest")


@dataclass(frozen=True, slots=True)
class SectionMatch:
    """Which candidates a section takes: every criterion given must hold, by any one of its
    values; a section with no criteria takes anything (a catch-all, best declared last)."""

    schemas: tuple[str, ...] = ()  # exact names, or prefixes ending in ``*``
    tags: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # seed sources, e.g. ``trigger``
    # Context fields (dotted paths) and the values they may hold, e.g. only completed tasks.
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def matches(self, record: Record, source: str) -> bool:
        return (
            (not self.schemas or _schema_matches(record.schema_name or "", self.schemas))
            and (not self.tags or not set(self.tags).isdisjoint(record.tags))
            and (not self.domains or not set(self.domains).isdisjoint(record.domains))
            and (not self.sources or source in self.sources)
            and all(_holds(record.context, path, values) for path, values in self.where)
        )


def _holds(context: Mapping[str, Any], path: str, values: tuple[Any, ...]) -> bool:
    found: Any = context
    for key in path.split("."):
        if not isinstance(found, Mapping) or key not in found:
            return False
        found = found[key]
    # ``True == 1`` in Python; in a definition they are different values.
    return any(v == found and isinstance(v, bool) == isinstance(found, bool) for v in values)


def _schema_matches(schema: str, patterns: tuple[str, ...]) -> bool:
    return any(schema.startswith(p[:-1]) if p.endswith("*") else schema == p for p in patterns)


@dataclass(frozen=True, slots=True)
class SectionSpec:
    name: str
    title: str
    match: SectionMatch = SectionMatch()
    max_tokens: int | None = None
    share: float | None = None  # of the budget left after the layout's own text
    max_items: int | None = None
    order_by: str = "relevance"  # or "newest", "oldest": the order within the section
    empty_text: str = ""  # instead of items when there are none
    intro: str = ""  # above the items when there are some (a table header, a warning)


@dataclass(frozen=True, slots=True)
class Sections:
    """An agent's section layout: its sections by priority, per-tier item limits and the
    heading above them."""

    specs: tuple[SectionSpec, ...]
    complexity_limits: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    heading: str = DEFAULT_HEADING

    def section_for(self, record: Record, source: str) -> SectionSpec | None:
        return next((s for s in self.specs if s.match.matches(record, source)), None)

    def max_items(self, spec: SectionSpec, tier: str) -> int | None:
        return self.complexity_limits.get(tier, {}).get(spec.name, spec.max_items)


@dataclass(frozen=True, slots=True)
class Candidate:
    record_id: UUID
    section: str
    tokens: int


@dataclass(frozen=True, slots=True)
class SectionUse:
    """One section's outcome: its own allocation, the tokens and items it took (in priority
    order), its effective item limit and how many candidates it was offered."""

    name: str
    allocated: int
    used: int
    items: tuple[UUID, ...]
    max_items: int | None
    candidates: int


@dataclass(frozen=True, slots=True)
class Allocation:
    sections: tuple[SectionUse, ...]
    rejected: tuple[UUID, ...]  # candidates their section could not hold, by priority

    @property
    def taken(self) -> dict[UUID, str]:
        """Each taken candidate's section."""
        return {rid: use.name for use in self.sections for rid in use.items}


def allocations(specs: Sequence[SectionSpec], available: int) -> list[int]:
    """Each section's own allocation of ``available`` tokens, in declaration order."""
    left = total = max(0, available)
    own: list[int | None] = []
    for spec in specs:
        if spec.max_tokens is not None:
            want: int | None = spec.max_tokens
        else:
            want = None if spec.share is None else int(spec.share * total)
        if want is not None:
            want = min(want, left)
            left -= want
        own.append(want)
    rest = [n for n, want in enumerate(own) if want is None]
    for k, n in enumerate(rest):  # an equal split; the first get the remainder's tokens
        own[n] = left // len(rest) + (1 if k < left % len(rest) else 0)
    return [want or 0 for want in own]


@dataclass(slots=True)
class _Fill:
    spec: SectionSpec
    own: int
    limit: int | None
    offered: list[Candidate]
    taken: list[Candidate] = field(default_factory=list)
    waiting: list[Candidate] = field(default_factory=list)  # did not fit, may fit later
    used: int = 0

    def ceiling(self) -> float:
        return float("inf") if self.spec.max_tokens is None else self.spec.max_tokens

    def has_room(self) -> bool:
        return self.limit is None or len(self.taken) < self.limit

    def take(self, candidate: Candidate) -> None:
        self.taken.append(candidate)
        self.used += candidate.tokens


def allocate(
    candidates: Sequence[Candidate], sections: Sections, available: int, tier: str = "normal"
) -> Allocation:
    """Candidates (in priority order, each already assigned a section) taken by their
    sections within ``available`` tokens; see the module docstring for the rules."""
    own = allocations(sections.specs, available)
    offered: dict[str, list[Candidate]] = {spec.name: [] for spec in sections.specs}
    for candidate in candidates:
        offered.get(candidate.section, []).append(candidate)
    fills = [
        _Fill(spec, mine, sections.max_items(spec, tier), offered[spec.name])
        for spec, mine in zip(sections.specs, own, strict=True)
    ]
    carry = 0
    for fill in fills:
        spendable = min(fill.own + carry, fill.ceiling())
        for candidate in fill.offered:
            if not fill.has_room():
                break
            if fill.used + candidate.tokens <= spendable:
                fill.take(candidate)
            else:
                fill.waiting.append(candidate)
        carry += fill.own - fill.used
    # What no section used (and what shares left unallocated), once more by priority.
    carry = max(0, available) - sum(fill.used for fill in fills)
    for fill in fills:
        for candidate in fill.waiting:
            if not fill.has_room():
                break
            if candidate.tokens <= carry and fill.used + candidate.tokens <= fill.ceiling():
                fill.take(candidate)
                carry -= candidate.tokens
    return _outcome(candidates, fills)


def _outcome(candidates: Sequence[Candidate], fills: list[_Fill]) -> Allocation:
    taken = {c.record_id for fill in fills for c in fill.taken}
    known = {fill.spec.name for fill in fills}
    order = {c.record_id: n for n, c in enumerate(candidates)}
    uses = tuple(
        SectionUse(
            fill.spec.name, fill.own, fill.used,
            tuple(sorted((c.record_id for c in fill.taken), key=order.__getitem__)),
            fill.limit, len(fill.offered),
        )
        for fill in fills
    )  # fmt: skip
    rejected = tuple(
        c.record_id for c in candidates if c.section in known and c.record_id not in taken
    )
    return Allocation(uses, rejected)


def check_sections(context: Mapping[str, Any], sources: Sequence[str]) -> None:
    """What the JSON Schema cannot say about an agent's sections (it has checked the types),
    ``sources`` being the seed sources' names: raise 422 naming the path of the first
    problem."""
    names: set[str] = set()
    shares = 0.0
    for n, section in enumerate(context.get("sections") or ()):
        path = f"context.sections[{n}]"
        if section["name"] in names:
            raise _invalid(f"{path}.name", f"{section['name']!r} is declared twice")
        names.add(section["name"])
        if "max_tokens" in section and "share" in section:
            raise _invalid(path, "give max_tokens or share, not both")
        shares += section.get("share", 0.0)
        for m, source in enumerate((section.get("match") or {}).get("sources") or ()):
            if source not in sources:
                known = ", ".join(sources)
                raise _invalid(f"{path}.match.sources[{m}]", f"{source!r} is none of {known}")
    if shares > 1.0 + 1e-9:
        raise _invalid("context.sections", f"the shares add up to {shares:g}, more than 1")
    for tier, limits in (context.get("complexity_limits") or {}).items():
        for name in limits:
            if name not in names:
                path = f"context.complexity_limits.{tier}.{name}"
                raise _invalid(path, "no section of that name is declared")


def _invalid(path: str, message: str) -> InvalidInput:
    return InvalidInput(f"{path}: {message}"[:500], extra={"path": path})
