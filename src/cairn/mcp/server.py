"""The MCP server: Cairn's tools on the official SDK's ``MCPServer``, for any transport."""

from __future__ import annotations

from importlib.metadata import version

from mcp.server.mcpserver import MCPServer

from cairn.mcp.path_tools import register_path_tools
from cairn.mcp.tools import BackendFor, register_tools

INSTRUCTIONS = """Cairn is a shared, long-term memory for agents. Records ("breadcrumbs") \
have a title, a JSON context, tags and a kind (schema_name). Use `get_context` or \
`search` before answering questions that may depend on earlier work, `remember` to store \
what should outlive this conversation, `recent` to catch up on a session, and \
`get_record` to read one record by id. Debug paths remember how a problem was solved: \
`path_list` finds earlier fixes, `path_start` / `path_resolve` open and close yours, \
`path_show` reads one. Errors come back as {"error", "detail"}."""


def build_server(backend_for: BackendFor) -> MCPServer:
    """An MCP server with Cairn's tools; ``backend_for`` gives each tool call its backend
    (the HTTP mount: the caller's own, in-process; stdio: one HTTP client)."""
    server: MCPServer = MCPServer(
        "cairn", title="Cairn", instructions=INSTRUCTIONS, version=version("cairn")
    )
    register_tools(server, backend_for)
    register_path_tools(server, backend_for)
    return server


async def serve_stdio(url: str, token: str | None) -> None:
    """``cairn mcp``: the tools over stdin/stdout, acting on the Cairn at ``url`` with
    ``token`` (its tenant and roles)."""
    from cairn.mcp.http_backend import HttpBackend

    async with HttpBackend.connect(url, token) as backend:
        await build_server(lambda _: backend).run_stdio_async()
