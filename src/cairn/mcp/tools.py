"""The MCP tools: their arguments, their descriptions (read by the model that calls them),
and the one place where anything a tool raises becomes an MCP tool error."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from cairn.api.errors import DATABASE_UNAVAILABLE, problems_text
from cairn.api.input import text_problem
from cairn.db.errors import is_retryable_conflict, is_unavailable
from cairn.errors import CairnError, InvalidInput
from cairn.mcp.backend import (
    CairnBackend,
    ContextQuery,
    Record,
    Records,
    Remembered,
    SearchMode,
    SearchResults,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
BackendFor = Callable[[Context], CairnBackend]

CONFLICT = "a concurrent change made the database abort this call; nothing changed; retry"
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)

REMEMBER = """Store a memory in Cairn: a fact, decision, preference, observation or result
worth finding again later (by you or by other agents sharing this Cairn).
Use it when something should outlive this conversation. Keep one idea per record.
Arguments: `title` (a short sentence saying what it is), `context` (a JSON object with the
details, e.g. {"text": "..."} or structured fields), optional `schema_name` (the kind of
record; default "note.v1"), `tags` (short labels such as "project:apollo") and `session`
(the conversation id; the record then shows up in `recent` for that session).
Returns {id, version}: keep the id to read the record back with get_record."""

SEARCH = """Find stored records by meaning: what is known about a topic, earlier decisions,
notes, facts. Use it before answering questions about things that may have been remembered.
Arguments: `text` (a question or a few keywords), optional `mode` ("hybrid", the default,
combines meaning and exact words; "vector" uses meaning only), `schema_name` (only records
of that kind, e.g. "note.v1") and `limit` (1 to 50 hits, default 5).
Returns {mode, hits}: each hit has id, title, tags, schema_name, context and a `score`
(higher is a closer match)."""

GET_CONTEXT = """Assemble the context an agent should read for a question: the most relevant
records (by meaning, by links between records, from the session) packed into one text
within a token budget, with an explanation of what was chosen.
Use it at the start of a task or before answering, to ground yourself in what Cairn knows.
Arguments: `query` (the question or task), and either `agent_id` (an agent registered in
Cairn, whose sources and budget apply) or `agent` (inline sources: an agent.def.v1
context such as {"context_sources": {"semantic": {"enabled": true, "limit": 5}}}), optional
`session` (the conversation id, to include its recent records) and `budget` (tokens).
Returns {formatted_context, token_count, token_budget, breadcrumb_count, explain, ...}:
read `formatted_context`."""

GET_RECORD = """Read one record by its id, as an LLM should see it (its context shaped by
the record's hints). Use it for an id from search, recent, get_context or remember.
Arguments: `id` (a UUID). Returns the record: id, title, description, tags, schema_name,
context, version, created_at, updated_at. An unknown id is an error (not_found)."""

RECENT = """List the latest records of a conversation session, newest first, with their
context. Use it to catch up on what happened in a session (messages, results, notes).
Arguments: `session` (the session id, as given to remember; "session:" in front is
optional) and `limit` (1 to 100, default 20). Returns {records}."""

Title = Annotated[str, Field(min_length=1, description="a short sentence saying what it is")]
RecordContext = Annotated[dict[str, Any], Field(description="the details, a JSON object")]
SchemaName = Annotated[
    str | None, Field(description='the kind of record, e.g. "note.v1", "knowledge.v1"')
]
Tags = Annotated[list[str] | None, Field(description='short labels, e.g. ["project:apollo"]')]
Session = Annotated[str | None, Field(description="the conversation (session) id")]


def register_tools(server: MCPServer, backend_for: BackendFor) -> None:
    """Add Cairn's tools to ``server``; ``backend_for`` gives each call its backend."""

    async def remember(
        title: Title,
        context: RecordContext,
        ctx: Context,
        schema_name: SchemaName = "note.v1",
        tags: Tags = None,
        session: Session = None,
    ) -> Remembered:
        check_storable({"title": title, "context": context, "tags": tags, "session": session})
        return await answer(
            lambda: backend_for(ctx).remember(
                schema_name=schema_name, title=title, context=context,
                tags=tags or [], session=session,
            )
        )  # fmt: skip

    async def search(
        text: Annotated[str, Field(min_length=1, description="a question or keywords")],
        ctx: Context,
        mode: Annotated[SearchMode, Field(description="hybrid or vector")] = "hybrid",
        schema_name: SchemaName = None,
        limit: Annotated[int, Field(ge=1, le=50, description="how many hits")] = 5,
    ) -> SearchResults:
        check_storable({"text": text, "schema_name": schema_name})
        return await answer(
            lambda: backend_for(ctx).search(text, mode=mode, schema_name=schema_name, limit=limit)
        )

    async def get_context(
        query: Annotated[str, Field(min_length=1, description="the question or task")],
        ctx: Context,
        agent_id: Annotated[str | None, Field(description="a registered agent's id")] = None,
        agent: Annotated[
            dict[str, Any] | None, Field(description="inline agent.def.v1 context (sources)")
        ] = None,
        session: Session = None,
        budget: Annotated[int | None, Field(ge=1, description="token budget")] = None,
    ) -> dict[str, Any]:
        if agent_id is None and agent is None:
            raise ToolError(error_text("invalid_input", "give agent_id or agent (or both)"))
        request = ContextQuery(query, agent_id, agent, session, budget)
        check_storable(request.body())
        return await answer(lambda: backend_for(ctx).get_context(request))

    async def get_record(
        id: Annotated[uuid.UUID, Field(description="the record's id")], ctx: Context
    ) -> Record:
        return await answer(lambda: backend_for(ctx).get_record(id))

    async def recent(
        session: Annotated[str, Field(min_length=1, description="the session id")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100, description="how many records")] = 20,
    ) -> Records:
        check_storable({"session": session})
        return await answer(lambda: backend_for(ctx).recent(session, limit=limit))

    server.add_tool(remember, title="Remember", description=REMEMBER, annotations=WRITES)
    server.add_tool(search, title="Search memory", description=SEARCH, annotations=READ_ONLY)
    server.add_tool(
        get_context, title="Get context", description=GET_CONTEXT, annotations=READ_ONLY
    )
    server.add_tool(get_record, title="Get record", description=GET_RECORD, annotations=READ_ONLY)
    server.add_tool(recent, title="Recent in session", description=RECENT, annotations=READ_ONLY)


async def answer(call: Callable[[], Awaitable[T]]) -> T:
    """Run one backend call; whatever it raises comes back as a tool error carrying
    Cairn's ``{error, detail}`` (a server fault is logged here, its text stays here)."""
    try:
        return await call()
    except CairnError as error:
        raise ToolError(error_text(error.code, error.detail)) from error
    except ValidationError as error:
        # A record the backend builds from the arguments (an empty schema_name, say).
        raise ToolError(error_text("invalid_input", problems_text(error.errors()))) from error
    except Exception as error:
        if is_unavailable(error):
            log.warning("MCP tool: the database is unreachable (%s)", type(error).__name__)
            raise ToolError(error_text("unavailable", DATABASE_UNAVAILABLE)) from error
        if is_retryable_conflict(error):
            raise ToolError(error_text("unavailable", CONFLICT)) from error
        log.exception("MCP tool failed")
        raise ToolError(error_text("internal_error", "an unexpected error occurred")) from error


def error_text(code: str, detail: str) -> str:
    return json.dumps({"error": code, "detail": detail})


def check_storable(arguments: dict[str, Any]) -> None:
    """Refuse text PostgreSQL cannot store (NUL, lone surrogates) as the API does, naming
    where it is; the HTTP API checks its own requests, so this keeps both transports alike."""
    pending: list[tuple[str, Any]] = list(arguments.items())
    while pending:
        where, value = pending.pop()
        if isinstance(value, str):
            if problem := text_problem(value):
                raise ToolError(error_text(InvalidInput.code, f"{where[:120]}: {problem}"))
        elif isinstance(value, dict):
            for key, item in value.items():
                pending.append((f"{where}.<key>", key))
                pending.append((f"{where}.{str(key)[:40]}", item))
        elif isinstance(value, list):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(value))
