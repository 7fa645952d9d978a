"""The MCP tools of debug paths: how a session's problem was met and solved, so that the
next agent meeting the same error gets the fix. Cairn detects paths from the records an
agent posts; these tools let the agent start, resolve and read them explicitly."""

from __future__ import annotations

import uuid
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from cairn.mcp.backend import PathList
from cairn.mcp.tools import READ_ONLY, WRITES, BackendFor, answer, check_storable, error_text
from cairn.paths.schemas import PathDetailView, PathStatus

PATH_START = """Open a debug path for your session: say that you are now working on a
problem, so that the steps you take and what finally fixes it are remembered for the next
agent that meets the same error. Cairn also opens one by itself when a record you post
shows an error (a failing command, a traceback); use this when it has not, or when the
problem is not an error Cairn can see (a hang, a wrong result).
Arguments: `session` (your conversation id; "session:" in front is optional), `summary`
(the problem in one line, e.g. "export job hangs after 10 minutes") and optional
`signature` (the exact error line, if there is one).
Returns {path, waypoints}: keep `path.id` for path_resolve. A session has one active path
at a time: starting a second is an error (conflict) naming the active one."""

PATH_RESOLVE = """Mark a debug path resolved once the problem is fixed, and say what fixed it:
this is what the next agent meeting the same error will be told ("When <root cause>:
<what fixed it>"). Cairn also resolves a path by itself after repeated successes.
Arguments: `path_id` (from path_start, path_show or path_list), optional `what_fixed_it`
(the change that made it work, in a sentence, e.g. "stream the rows instead of loading
them all") and `root_cause` (why it failed). Whatever you leave out is extracted from the
path's steps. Returns {path, waypoints} with `path.kiss_summary`. Only an active path can
be resolved (otherwise a conflict error); an unknown id is not_found."""

PATH_SHOW = """Read one debug path: its status (active, resolved, abandoned), the error it
started with, its steps in order (waypoints: error, attempt, failure, success, pivot,
hypothesis, discovery, revert, resolution; each with the record it came from) and, once
resolved, its summary of what fixed it.
Arguments: either `path_id`, or `session` to read that session's active path.
Returns {path, waypoints}. No such path (or no active path in the session) is a not_found
error."""

PATH_LIST = """List debug paths, the latest started first: to see whether a problem like
yours was solved before (read `kiss_summary` and `what_fixed_it` of resolved paths), or
what is still open.
Arguments: optional `status` ("active", "resolved" or "abandoned"), `session` (only that
session's paths) and `limit` (1 to 100, default 20).
Returns {paths}: each with id, session, status, signature (the error line), sequence (how
many steps), kiss_summary, root_cause, what_fixed_it and files. Read one with path_show."""

PathId = Annotated[uuid.UUID, Field(description="the path's id")]
SessionId = Annotated[str, Field(min_length=1, description="the conversation (session) id")]


def register_path_tools(server: MCPServer, backend_for: BackendFor) -> None:
    async def path_start(
        session: SessionId,
        summary: Annotated[str, Field(min_length=1, description="the problem in one line")],
        ctx: Context,
        signature: Annotated[str | None, Field(description="the error line")] = None,
    ) -> PathDetailView:
        check_storable({"session": session, "summary": summary, "signature": signature})
        return await answer(lambda: backend_for(ctx).path_start(session, summary, signature))

    async def path_resolve(
        path_id: PathId,
        ctx: Context,
        what_fixed_it: Annotated[str | None, Field(description="the change that worked")] = None,
        root_cause: Annotated[str | None, Field(description="why it failed")] = None,
    ) -> PathDetailView:
        check_storable({"what_fixed_it": what_fixed_it, "root_cause": root_cause})
        return await answer(
            lambda: backend_for(ctx).path_resolve(path_id, what_fixed_it, root_cause)
        )

    async def path_show(
        ctx: Context,
        path_id: Annotated[uuid.UUID | None, Field(description="the path's id")] = None,
        session: Annotated[str | None, Field(description="a session: its active path")] = None,
    ) -> PathDetailView:
        if (path_id is None) == (session is None):
            raise ToolError(error_text("invalid_input", "give path_id or session (one of them)"))
        if path_id is not None:
            return await answer(lambda: backend_for(ctx).path_show(path_id))
        assert session is not None
        check_storable({"session": session})
        found = await answer(lambda: backend_for(ctx).path_active(session))
        if found is None:
            raise ToolError(error_text("not_found", f"{session} has no active path"))
        return found

    async def path_list(
        ctx: Context,
        status: Annotated[PathStatus | None, Field(description="only paths of this status")] = None,
        session: Annotated[str | None, Field(description="only this session's paths")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="how many paths")] = 20,
    ) -> PathList:
        check_storable({"session": session})
        return await answer(lambda: backend_for(ctx).path_list(status, session, limit))

    tools = (
        (path_start, "Start a debug path", PATH_START, WRITES),
        (path_resolve, "Resolve a debug path", PATH_RESOLVE, WRITES),
        (path_show, "Show a debug path", PATH_SHOW, READ_ONLY),
        (path_list, "List debug paths", PATH_LIST, READ_ONLY),
    )
    for tool, title, description, hints in tools:
        server.add_tool(tool, title=title, description=description, annotations=hints)
