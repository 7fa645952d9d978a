"""Agents (``agent.def.v1``): what triggers them, where their context comes from.

Definitions are validated on write against ``schemas/agent.def.v1.json``; parsing here is
lenient about what RCRT data leaves out (``null`` budgets, comments, unknown keys).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

AGENT_SCHEMA = "agent.def.v1"
CONTEXT_SCHEMA = "agent.context.v1"
DEFAULT_SESSION_LIMIT = 20


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
