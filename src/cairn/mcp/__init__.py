"""Cairn as an MCP server: the tools an agent calls (remember, search, get_context,
get_record, recent), served over stdio by ``cairn mcp`` and over streamable HTTP at ``/mcp``.

The tools act through :class:`~cairn.mcp.backend.CairnBackend`: in the API process on the
request's own caller (:mod:`cairn.mcp.inprocess`), in ``cairn mcp`` over HTTP to a running
Cairn (:mod:`cairn.mcp.http_backend`).
"""
