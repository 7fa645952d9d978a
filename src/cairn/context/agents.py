"""Agents (``agent.def.v1``): what triggers them, where their context comes from.

Definitions are validated on write against ``schemas/agent.def.v1.json``; parsing here is
lenient about what RCRT data leaves out (``null`` budgets, comments, unknown keys).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

AGENT_SCHEMA = "agent.def.v1"
CONTEXT_SCHEMA = "agent.context.v1"
DEFAULT_SESSION_LIMIT = 20
# Near-duplicate suppression is on unless an agent turns it off (``null``): measured on
# LoCoMo (benchmarks/quality/locomo.py), it costs no recall at any budget.
DEFAULT_DUPLICATE_SIMILARITY: float | None = 0.95


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
    ranking: Ranking = Ranking()

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
        ranking=_ranking(context.get("ranking")),
    )


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


def _session_limit(raw: Any) -> int:
    if isinstance(raw, Mapping) and isinstance(raw.get("limit"), int):
        return max(0, min(int(raw["limit"]), 500))
    return DEFAULT_SESSION_LIMIT


def _strings(raw: Any) -> tuple[str, ...]:
    return tuple(item for item in raw or () if isinstance(item, str))
