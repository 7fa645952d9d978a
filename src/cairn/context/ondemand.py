"""Context on demand (``POST /contexts/query``): the worker's assembly for a stored trigger
or a query text, for a registered or an inline agent, written nowhere and answered from
memory while the tenant's data is unchanged (context.answers).

Who may ask: a registered agent's context is the agent's own, so as for
``POST /contexts/assemble`` an emitter asks for itself and a curator for any agent. An
inline definition reaches nothing a subscriber could not already list and search, so a
subscriber may use one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cairn.assemblies.entry import QUERY, entry_of
from cairn.breadcrumbs.text import MAX_LLM_TEXT_CHARS
from cairn.context.agents import AGENT_SCHEMA, Agent, parse_agent
from cairn.context.builder import ContextBuilder
from cairn.context.definitions import check_definition
from cairn.context.explain import Timer
from cairn.context.trigger import AssemblyTrigger, query_text, query_trigger
from cairn.errors import Forbidden, InvalidInput, NotFound
from cairn.principal import Principal, Role

log = logging.getLogger(__name__)

AGENT_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
SESSION_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
EMBED_TIMEOUT_S = 5.0
INLINE_AGENT_ID = "inline"
EMBEDDING = "embedding"  # what `degraded` names when the embedder is down
_SESSION_TAG = "session_tag"  # kept with a cached answer, for its assembly log entry


class ContextQuery(BaseModel):
    """Exactly one of ``query`` / ``trigger_id``; ``agent_id`` and/or an inline ``agent``."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(default=None, min_length=1, max_length=MAX_LLM_TEXT_CHARS)
    trigger_id: uuid.UUID | None = None
    agent_id: str | None = Field(default=None, pattern=AGENT_ID)
    agent: dict[str, Any] | None = Field(
        default=None, description="an agent.def.v1 context; agent_id and trigger optional"
    )
    session: str | None = Field(default=None, pattern=SESSION_ID, description="a query's session")
    budget: int | None = Field(default=None, ge=1, le=1_000_000)
    debug: bool = Field(default=False, description="assemble afresh: bypass the cache")

    @model_validator(mode="after")
    def _one_trigger_and_an_agent(self) -> Self:
        if (self.query is None) == (self.trigger_id is None):
            raise ValueError("give exactly one of query or trigger_id")
        if self.query is not None and not self.query.strip():
            raise ValueError("query: must not be blank")
        if self.agent_id is None and self.agent is None:
            raise ValueError("give agent_id, an inline agent, or both")
        if self.trigger_id is not None and self.session is not None:
            raise ValueError("session: a stored trigger's session is its own session tag")
        return self

    def cache_key(self) -> str:
        """The request as the answer depends on it (``debug`` does not change it)."""
        return json.dumps(self.model_dump(mode="json", exclude={"debug"}), sort_keys=True)


class ContextAnswer(BaseModel):
    formatted_context: str
    token_count: int
    token_budget: int
    breadcrumb_count: int
    explain: dict[str, Any]
    timings_ms: dict[str, float]
    cache_hit: bool = False
    degraded: list[str] = Field(default_factory=list)


async def answer(
    builder: ContextBuilder, principal: Principal, request: ContextQuery, *, use_cache: bool
) -> ContextAnswer:
    """The answer, logged in the assembly log whether it came from the cache or not."""
    started = time.perf_counter()
    agent = await _agent(builder, principal, request)
    owner = principal.owner_id
    key = request.cache_key()
    if use_cache and not request.debug and (hit := builder.answers.get(owner, key)) is not None:
        result = ContextAnswer.model_validate(hit | {"cache_hit": True})
        took = {"total": round((time.perf_counter() - started) * 1000.0, 3)}
        _log(builder, agent, request, result, hit.get(_SESSION_TAG), took)
        return result
    ticket = builder.answers.ticket(owner)
    timer = Timer()
    degraded: list[str] = []
    trigger: uuid.UUID | AssemblyTrigger
    if request.query is not None:
        with timer.phase("embed"):
            embedding = await _embed(builder, query_text(request.query))
        degraded += [] if embedding is not None else [EMBEDDING]
        trigger = query_trigger(owner, request.query, request.session, embedding)
    else:
        assert request.trigger_id is not None
        trigger = request.trigger_id
    assembly = await builder.preview(agent, trigger, timer=timer, budget=request.budget)
    if assembly is None:
        raise NotFound(f"trigger {request.trigger_id} not found")
    context = assembly.context
    result = ContextAnswer(
        formatted_context=context["formatted_context"], token_count=context["token_count"],
        token_budget=context["token_budget"], breadcrumb_count=context["breadcrumb_count"],
        explain=context["explain"], timings_ms=timer.as_dict(), degraded=degraded,
    )  # fmt: skip
    if not degraded:  # a degraded answer is not kept: the embedder may be back next time
        kept = result.model_dump() | {_SESSION_TAG: assembly.session_tag}
        builder.answers.put(key, ticket, kept)
    _log(builder, agent, request, result, assembly.session_tag, result.timings_ms)
    return result


def _log(
    builder: ContextBuilder,
    agent: Agent,
    request: ContextQuery,
    result: ContextAnswer,
    session_tag: str | None,
    timings_ms: dict[str, float],
) -> None:
    """Queued: written after the answer is sent (cairn.assemblies.queue)."""
    if builder.assembly_log is None:
        return
    figures = {"explain": result.explain, "token_count": result.token_count}
    figures["token_budget"] = result.token_budget
    entry = entry_of(
        agent.owner_id, agent.agent_id, QUERY, figures, session_tag=session_tag,
        trigger_id=request.trigger_id, query_text=request.query, timings_ms=timings_ms,
        cache_hit=result.cache_hit, degraded=result.degraded,
    )  # fmt: skip
    builder.assembly_log.put(entry)


async def _agent(builder: ContextBuilder, principal: Principal, request: ContextQuery) -> Agent:
    if request.agent is not None:
        return _inline_agent(principal, request.agent, request.agent_id)
    assert request.agent_id is not None
    if request.agent_id != principal.actor and not principal.has(Role.CURATOR):
        raise Forbidden(
            "a registered agent's context is asked for by the agent itself or a curator; "
            "others may send an inline agent definition"
        )
    if not principal.has(Role.EMITTER):
        raise Forbidden("a registered agent's context needs the emitter role")
    agents = {a.agent_id: a for a in await builder.directory.agents(principal.owner_id)}
    found = agents.get(request.agent_id)
    if found is None:
        raise NotFound(f"no agent.def.v1 with agent_id {request.agent_id!r}")
    return found


def _inline_agent(principal: Principal, raw: dict[str, Any], agent_id: str | None) -> Agent:
    """An inline definition, checked as ``agent.def.v1`` is on write; the agent id and
    trigger may be left out (nothing triggers an inline agent)."""
    definition = {"agent_id": agent_id or INLINE_AGENT_ID, "context_trigger": {}, **raw}
    if agent_id is not None and definition["agent_id"] != agent_id:
        raise InvalidInput("agent.agent_id differs from agent_id")
    try:
        check_definition(AGENT_SCHEMA, definition)
    except InvalidInput as error:
        raise InvalidInput(f"agent: {error.detail}") from error
    agent = parse_agent(uuid.UUID(int=0), principal.owner_id, definition)
    if agent is None:  # the schema requires both fields parse_agent needs
        raise InvalidInput("agent: not an agent.def.v1 context")
    return agent


async def _embed(builder: ContextBuilder, text: str) -> list[float] | None:
    """The query's embedding, or None when the embedder is down (the lexical half still
    scores: seeds without a similarity, see context.sources)."""
    try:
        async with asyncio.timeout(EMBED_TIMEOUT_S):
            (vector,) = await builder.embedder.embed([text])
        return vector
    except Exception:  # any failure of the model degrades the answer, never fails it
        log.warning("embedding a context query failed; answering from lexical scores only")
        return None
