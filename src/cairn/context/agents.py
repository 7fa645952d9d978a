"""Agents (``agent.def.v1``): what triggers them, where their context comes from.

Definitions are validated on write against ``schemas/agent.def.v1.json``; parsing here is
lenient about what RCRT data leaves out (``null`` budgets, comments, unknown keys).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.context.sections import (
    DEFAULT_HEADING,
    ORDERS,
    TIERS,
    SectionMatch,
    Sections,
    SectionSpec,
)

AGENT_SCHEMA = "agent.def.v1"
CONTEXT_SCHEMA = "agent.context.v1"
DEFAULT_SESSION_LIMIT = 20
# Near-duplicate suppression is off unless an agent asks for it. On LoCoMo
# (benchmarks/quality/locomo.py) 0.95 changed recall by 0.0/0.0/0.0/+0.2 points at
# 500-4000 tokens, while turns that differ only in a number ("history line 1" and
# "history line 2") are that similar to MiniLM: on by default, it would drop them.
DEFAULT_DUPLICATE_SIMILARITY: float | None = None


@dataclass(frozen=True, slots=True)
class Trigger:
    schema_name: str | None = None
    any_tags: tuple[str, ...] = ()
    all_tags: tuple[str, ...] = ()
    none_tags: tuple[str, ...] = ()

    def matches(self, schema_name: str | None, tags: Sequence[str]) -> bool:
        present = set(tags)
        return (
            (self.schema_name is None or schema_name == self.schema_name)
            and (not self.any_tags or bool(present.intersection(self.any_tags)))
            and present.issuperset(self.all_tags)
            and not present.intersection(self.none_tags)
        )


@dataclass(frozen=True, slots=True)
class AlwaysSource:
    kind: str  # "schema" or "tag"
    schema_name: str | None
    tag: str | None
    method: str  # latest | recent | all
    limit: int


@dataclass(frozen=True, slots=True)
class SemanticSource:
    enabled: bool = False
    schemas: tuple[str, ...] = ()
    limit: int = 5
    min_similarity: float = 0.0
    scope: str = "global"  # or "session"


@dataclass(frozen=True, slots=True)
class Ranking:
    """How candidates are ranked beyond path cost (context.ranking): records at least
    ``duplicate_similarity`` similar to one already taken are left out; ``mmr_lambda``
    orders them by maximal marginal relevance; records reached only through the graph
    that cost more than ``max_path_cost`` are left out. None turns each off."""

    duplicate_similarity: float | None = DEFAULT_DUPLICATE_SIMILARITY
    mmr_lambda: float | None = None
    max_path_cost: float | None = None

    @property
    def compares_content(self) -> bool:
        """Whether ranking needs the candidates' embeddings."""
        return self.duplicate_similarity is not None or self.mmr_lambda is not None


@dataclass(frozen=True, slots=True)
class Agent:
    record_id: uuid.UUID
    owner_id: uuid.UUID
    agent_id: str
    trigger: Trigger
    always: tuple[AlwaysSource, ...]
    semantic: SemanticSource
    session_limit: int
    context_budget: int | None
    llm_config_id: str | None
    # ``graph.scope``: how far the graph walk may go. Unset, it follows the semantic
    # source: a session-scoped agent gets no records of other sessions through the graph.
    graph_scope: str | None = None
    # ``context_sources`` as written: a source that the fields above do not cover reads its
    # own entry (context.sources.<name>.parse).
    context_sources: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # ``domains.isolate``: when the tenant defines domains, leave out records of domains
    # isolated from the trigger's (context.isolation). On unless the agent says false.
    isolate_domains: bool = True
    sections: Sections | None = field(default=None, hash=False)  # None: the classic layout
    ranking: Ranking = Ranking()

    @property
    def session_scoped_graph(self) -> bool:
        """Whether the graph walk stays inside the trigger's sessions."""
        scope = self.graph_scope or self.semantic.scope
        return scope == "session"

    def triggered_by(self, event: Mapping[str, Any]) -> bool:
        if event.get("schema_name") == CONTEXT_SCHEMA:
            return False  # an assembled context never triggers another assembly
        return self.trigger.matches(event.get("schema_name"), event.get("tags") or ())


def parse_agent(
    record_id: uuid.UUID, owner_id: uuid.UUID, context: Mapping[str, Any]
) -> Agent | None:
    """An agent from a definition's context; None when it has no ``agent_id`` or trigger."""
    agent_id = context.get("agent_id")
    trigger = context.get("context_trigger")
    if not isinstance(agent_id, str) or not isinstance(trigger, Mapping):
        return None
    sources = context.get("context_sources") or {}
    budget = context.get("context_budget")
    llm_config = context.get("llm_config_id")
    return Agent(
        record_id=record_id,
        owner_id=owner_id,
        agent_id=agent_id,
        trigger=Trigger(
            schema_name=trigger.get("schema_name"),
            any_tags=_strings(trigger.get("any_tags")),
            all_tags=_strings(trigger.get("all_tags")),
            none_tags=_strings(trigger.get("none_tags")),
        ),
        always=tuple(
            _always(item) for item in sources.get("always") or () if isinstance(item, Mapping)
        ),
        semantic=_semantic(sources.get("semantic")),
        session_limit=_session_limit(sources.get("session")),
        context_budget=budget if isinstance(budget, int) and budget > 0 else None,
        llm_config_id=llm_config if isinstance(llm_config, str) and llm_config else None,
        graph_scope=_graph_scope(context.get("graph")),
        context_sources=dict(sources) if isinstance(sources, Mapping) else {},
        isolate_domains=_isolate(context.get("domains")),
        sections=parse_sections(context),
        ranking=_ranking(context.get("ranking")),
    )


def parse_sections(context: Mapping[str, Any]) -> Sections | None:
    """The agent's section layout; None when it declares no (usable) section. A section
    without a name or title is skipped, as is a second one of the same name."""
    specs: dict[str, SectionSpec] = {}
    raw = context.get("sections")
    for item in raw if isinstance(raw, list) else ():
        spec = _section(item) if isinstance(item, Mapping) else None
        if spec is not None and spec.name not in specs:
            specs[spec.name] = spec
    if not specs:
        return None
    limits = context.get("complexity_limits")
    layout = context.get("layout")
    heading = layout.get("heading") if isinstance(layout, Mapping) else None
    return Sections(
        specs=tuple(specs.values()),
        complexity_limits={
            tier: {k: v for k, v in by_name.items() if k in specs and _count(v)}
            for tier, by_name in (limits.items() if isinstance(limits, Mapping) else ())
            if tier in TIERS and isinstance(by_name, Mapping)
        },
        heading=heading if isinstance(heading, str) else DEFAULT_HEADING,
    )


def _section(item: Mapping[str, Any]) -> SectionSpec | None:
    name, title = item.get("name"), item.get("title")
    if not isinstance(name, str) or not name or not isinstance(title, str):
        return None
    raw_match = item.get("match")
    match: Mapping[str, Any] = raw_match if isinstance(raw_match, Mapping) else {}
    max_tokens, share, max_items = item.get("max_tokens"), item.get("share"), item.get("max_items")
    order_by, empty_text, intro = item.get("order_by"), item.get("empty_text"), item.get("intro")
    return SectionSpec(
        name=name,
        title=title,
        match=SectionMatch(
            schemas=_strings(match.get("schemas")),
            tags=_strings(match.get("tags")),
            domains=_strings(match.get("domains")),
            sources=_strings(match.get("sources")),
            where=_where(match.get("where")),
        ),
        max_tokens=max_tokens if _count(max_tokens) and max_tokens else None,
        share=float(share) if isinstance(share, int | float) and 0 < share <= 1 else None,
        max_items=max_items if _count(max_items) else None,
        order_by=order_by if order_by in ORDERS else "relevance",
        empty_text=empty_text if isinstance(empty_text, str) else "",
        intro=intro if isinstance(intro, str) else "",
    )


def _where(raw: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if not isinstance(raw, Mapping):
        return ()
    return tuple(
        (path, tuple(value) if isinstance(value, list) else (value,))
        for path, value in raw.items()
        if isinstance(path, str)
    )


def _count(raw: Any) -> bool:
    return isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0


def _always(item: Mapping[str, Any]) -> AlwaysSource:
    kind = "tag" if item.get("type") == "tag" else "schema"
    limit = item.get("limit")
    return AlwaysSource(
        kind=kind,
        schema_name=item.get("schema_name"),
        tag=item.get("tag"),
        method=str(item.get("method") or "latest"),
        limit=max(1, min(int(limit), 500)) if isinstance(limit, int) else 1,
    )


def _semantic(raw: Any) -> SemanticSource:
    if not isinstance(raw, Mapping):
        return SemanticSource()
    limit = raw.get("limit")
    similarity = raw.get("min_similarity")
    return SemanticSource(
        enabled=bool(raw.get("enabled", True)),
        schemas=_strings(raw.get("schemas")),
        limit=max(1, min(int(limit), 200)) if isinstance(limit, int) else 5,
        min_similarity=float(similarity) if isinstance(similarity, int | float) else 0.0,
        scope="session" if raw.get("scope") == "session" else "global",
    )


def _ranking(raw: Any) -> Ranking:
    if not isinstance(raw, Mapping):
        return Ranking()
    default = Ranking()
    return Ranking(
        duplicate_similarity=_number(raw, "duplicate_similarity", default.duplicate_similarity),
        mmr_lambda=_number(raw, "mmr_lambda", default.mmr_lambda),
        max_path_cost=_number(raw, "max_path_cost", default.max_path_cost),
    )


def _number(raw: Mapping[str, Any], key: str, default: float | None) -> float | None:
    """``raw[key]`` as a float; None when it is null; ``default`` when it is absent."""
    if key not in raw:
        return default
    value = raw[key]
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _isolate(raw: Any) -> bool:
    return not (isinstance(raw, Mapping) and raw.get("isolate") is False)


def _graph_scope(raw: Any) -> str | None:
    if isinstance(raw, Mapping) and raw.get("scope") in ("session", "global"):
        return str(raw["scope"])
    return None


def _session_limit(raw: Any) -> int:
    if isinstance(raw, Mapping) and isinstance(raw.get("limit"), int):
        return max(0, min(int(raw["limit"]), 500))
    return DEFAULT_SESSION_LIMIT


def _strings(raw: Any) -> tuple[str, ...]:
    return tuple(item for item in raw or () if isinstance(item, str))
