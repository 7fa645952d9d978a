"""``/contexts``: the latest assembled context of a consumer, and on-demand assembly."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from cairn.api.deps import PrincipalDep, ResourcesDep, SessionDep, require_role
from cairn.assemblies.entry import ASSEMBLE
from cairn.breadcrumbs import repository
from cairn.context import ondemand
from cairn.context.agents import AGENT_SCHEMA, CONTEXT_SCHEMA
from cairn.context.debug import render_debug
from cairn.context.ondemand import ContextAnswer, ContextQuery
from cairn.context.write import context_record_id
from cairn.errors import Forbidden, NotFound
from cairn.principal import Role

router = APIRouter(prefix="/contexts", tags=["contexts"])

AGENT_ID = ondemand.AGENT_ID
DEGRADED_HEADER = "X-Cairn-Degraded"
SESSION_ID = r"^(session:)?[^\s]{1,200}$"


class MarkdownResponse(PlainTextResponse):
    media_type = "text/markdown"


class AssembleRequest(BaseModel):
    trigger_id: uuid.UUID
    agent_id: str = Field(pattern=AGENT_ID)


class AssembledContext(BaseModel):
    id: uuid.UUID
    version: int
    consumer_id: str
    session: str | None
    context: dict[str, Any]


@router.get("/{consumer_id}", dependencies=[require_role(Role.SUBSCRIBER)])
async def latest_context(
    consumer_id: str, db: SessionDep, principal: PrincipalDep, session: str | None = None
) -> AssembledContext:
    """The newest assembly for ``consumer_id`` in a session (``?session=<id>`` or
    ``session:<id>``; none: the assemblies of triggers without a session)."""
    session_id = session.removeprefix("session:") if session else None
    tag = f"session:{session_id}" if session_id else None
    record_id = context_record_id(principal.owner_id, consumer_id, tag)
    row = await repository.get(db, principal.owner_id, record_id)
    if row is None:
        raise NotFound(f"no context assembled for {consumer_id!r} in this session yet")
    return AssembledContext(
        id=row["id"], version=row["version"], consumer_id=consumer_id, session=session_id,
        context=row["context"],
    )  # fmt: skip


@router.get(
    "/{agent_id}/debug",
    dependencies=[require_role(Role.SUBSCRIBER)],
    response_class=MarkdownResponse,
)
async def context_debug(
    db: SessionDep,
    principal: PrincipalDep,
    agent_id: Annotated[str, Path(pattern=AGENT_ID)],
    session: Annotated[str | None, Query(pattern=SESSION_ID)] = None,
) -> MarkdownResponse:
    """Seed 003's "Context Debug" block, as Markdown, for the newest assembly of
    ``agent_id`` (in ``session``, when given): signals, knowledge matched, dependencies,
    filtering and each section's allocation, read from the stored ``explain``."""
    if session is None:
        flt = repository.ListFilter(schema_name=CONTEXT_SCHEMA, tag=f"consumer:{agent_id}")
        rows = await repository.list_breadcrumbs(db, principal.owner_id, flt, limit=1)
        row = rows[0] if rows else None
    else:
        tag = "session:" + session.removeprefix("session:")
        row = await repository.get(
            db, principal.owner_id, context_record_id(principal.owner_id, agent_id, tag)
        )
    if row is None or row["schema_name"] != CONTEXT_SCHEMA:
        where = f" in session {session!r}" if session else ""
        raise NotFound(f"no context assembled for {agent_id!r}{where} yet")
    return MarkdownResponse(render_debug(row["context"]))


@router.post("/assemble", dependencies=[require_role(Role.EMITTER)])
async def assemble_now(
    body: AssembleRequest, resources: ResourcesDep, principal: PrincipalDep
) -> AssembledContext:
    """Assemble for ``agent_id`` with ``trigger_id`` as the trigger, now, and store it.
    An emitter assembles for itself (``agent_id`` = its token's subject); a curator for any."""
    if body.agent_id != principal.actor and not principal.has(Role.CURATOR):
        raise Forbidden("an emitter assembles only its own context; curators assemble any")
    builder = resources.contexts
    builder.directory.on_event({"schema_name": AGENT_SCHEMA, "owner_id": str(principal.owner_id)})
    agents = {a.agent_id: a for a in await builder.directory.agents(principal.owner_id)}
    agent = agents.get(body.agent_id)
    if agent is None:
        raise NotFound(f"no agent.def.v1 with agent_id {body.agent_id!r}")
    row = await builder.build(agent, body.trigger_id, event_id="on-demand", origin=ASSEMBLE)
    if row is None:
        raise NotFound(f"trigger {body.trigger_id} not found")
    session_tags = [tag for tag in row["tags"] if tag.startswith("session:")]
    return AssembledContext(
        id=row["id"], version=row["version"], consumer_id=agent.agent_id,
        session=session_tags[0].removeprefix("session:") if session_tags else None,
        context=row["context"],
    )  # fmt: skip


@router.post("/query", dependencies=[require_role(Role.SUBSCRIBER)])
async def query_context(
    body: ContextQuery,
    resources: ResourcesDep,
    principal: PrincipalDep,
    response: Response,
    cache_control: Annotated[str | None, Header(alias="Cache-Control")] = None,
) -> ContextAnswer:
    """The context the worker would assemble for ``agent_id`` (or an inline ``agent``) with
    ``trigger_id`` or a ``query`` text as the trigger, written nowhere. Answers come from
    memory while the tenant's data is unchanged (``cache_hit``); ``debug: true`` or
    ``Cache-Control: no-cache`` assembles afresh. With the embedder down a query is
    answered from lexical scores only: ``degraded: ["embedding"]`` and the
    ``X-Cairn-Degraded`` header say so."""
    no_cache = cache_control is not None and "no-cache" in cache_control.lower()
    answer = await ondemand.answer(resources.contexts, principal, body, use_cache=not no_cache)
    if answer.degraded:
        response.headers[DEGRADED_HEADER] = ",".join(answer.degraded)
    return answer
