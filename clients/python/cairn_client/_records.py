"""Routes on records and contexts: create, read, change, search, render, assemble."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from cairn_client._core import Call, call, create_headers, keyed_record, query_params, route
from cairn_client.models import (
    AssembledContext,
    BatchRecord,
    BatchResult,
    Breadcrumb,
    BreadcrumbCreate,
    BreadcrumbFull,
    BreadcrumbListItem,
    BreadcrumbUpdate,
    Changed,
    ContextQuery,
    Created,
    Graph,
    HistoryEntry,
    QueriedContext,
    RecordEdges,
    RecordProcessing,
    RenderResult,
    SearchHit,
    SearchMode,
    Selector,
    Sensitivity,
    Visibility,
)
from cairn_client.sse import StreamOptions, stream

Id = UUID | str


class RecordRoutes:
    @route
    def create_breadcrumb(
        self,
        title: str,
        context: dict[str, Any],
        *,
        schema_name: str | None = None,
        tags: Sequence[str] = (),
        description: str | None = None,
        llm_hints: dict[str, Any] | None = None,
        visibility: Visibility | None = None,
        sensitivity: Sensitivity | None = None,
        ttl: datetime | None = None,
        semantic_version: str | None = None,
        idempotency_key: str | None = None,
    ) -> Call[Created]:
        """Create a record; a repeat with the same ``idempotency_key`` returns the first."""
        fields = {
            "schema_name": schema_name,
            "description": description,
            "llm_hints": llm_hints,
            "visibility": visibility,
            "sensitivity": sensitivity,
            "ttl": ttl,
            "semantic_version": semantic_version,
        }
        body = BreadcrumbCreate(
            title=title,
            context=context,
            tags=list(tags),
            **{key: value for key, value in fields.items() if value is not None},
        )
        return call(
            "create_breadcrumb", Created, body=body, headers=create_headers(idempotency_key)
        )

    @route
    def create_breadcrumbs(
        self, records: Sequence[BatchRecord | Mapping[str, Any]], *, atomic: bool = False
    ) -> Call[BatchResult]:
        """Create many records in one request and one transaction (the server takes up to
        1000 by default): one result per record, in order. Refused records are not written,
        the others are; ``atomic`` writes nothing when one is refused (``InvalidInput``)."""
        body = {"records": [keyed_record(record) for record in records]}
        return call("create_breadcrumbs", BatchResult, body=body, params={"atomic": atomic or None})

    @route
    def get_breadcrumb(self, breadcrumb_id: Id, *, explain: bool = False) -> Call[Breadcrumb]:
        """The record as an LLM reads it (its ``llm_hints`` applied)."""
        path = {"breadcrumb_id": breadcrumb_id}
        return call("get_breadcrumb", Breadcrumb, path=path, params={"explain": explain or None})

    @route
    def get_breadcrumb_full(self, breadcrumb_id: Id) -> Call[BreadcrumbFull]:
        return call("get_breadcrumb_full", BreadcrumbFull, path={"breadcrumb_id": breadcrumb_id})

    @route
    def update_breadcrumb(
        self, breadcrumb_id: Id, changes: BreadcrumbUpdate, *, if_match: int | None = None
    ) -> Call[Changed]:
        """Change the fields set in ``changes``; ``if_match`` raises ``VersionMismatch`` when
        the record has moved past that version."""
        headers = {"If-Match": None if if_match is None else str(if_match)}
        path = {"breadcrumb_id": breadcrumb_id}
        return call("update_breadcrumb", Changed, path=path, body=changes, headers=headers)

    @route
    def delete_breadcrumb(self, breadcrumb_id: Id) -> Call[Changed]:
        return call("delete_breadcrumb", Changed, path={"breadcrumb_id": breadcrumb_id})

    @route
    def list_breadcrumbs(
        self,
        *,
        schema_name: str | None = None,
        tag: str | None = None,
        any_tags: Sequence[str] | None = None,
        all_tags: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        cursor: str | None = None,
        include_context: bool = False,
    ) -> Call[list[BreadcrumbListItem]]:
        """One page of records, newest first (``include_context``: items are ``Breadcrumb``)."""
        params = {
            "schema_name": schema_name,
            "tag": tag,
            "any_tags": any_tags,
            "all_tags": all_tags,
            "limit": limit,
            "offset": offset,
            "cursor": cursor,
            "include_context": include_context or None,
        }
        into = list[Breadcrumb] if include_context else list[BreadcrumbListItem]
        return call("list_breadcrumbs", into, params=params)

    @route
    def search(
        self,
        q: str | None = None,
        *,
        qvec: Sequence[float] | None = None,
        nn: int | None = None,
        schema_name: str | None = None,
        tag: str | None = None,
        mode: SearchMode | None = None,
        include_context: bool = False,
    ) -> Call[list[SearchHit]]:
        """Records nearest to a text ``q`` (or a vector ``qvec``), best first; ``mode="hybrid"``
        fuses the dense score with BM25."""
        params = {
            "q": q,
            "qvec": qvec,
            "nn": nn,
            "schema_name": schema_name,
            "tag": tag,
            "mode": mode,
            "include_context": include_context or None,
        }
        return call("search", list[SearchHit], params=params)

    @route
    def render(self, ids: Sequence[Id], *, explain: bool = False) -> Call[RenderResult]:
        body = {"ids": [str(each) for each in ids], "explain": explain}
        return call("render", RenderResult, body=body)

    @route
    def history(self, breadcrumb_id: Id, *, limit: int | None = None) -> Call[list[HistoryEntry]]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("history", list[HistoryEntry], path=path, params={"limit": limit})

    @route
    def record_edges(self, breadcrumb_id: Id, *, limit: int | None = None) -> Call[RecordEdges]:
        """The record's edges out and in (``limit`` each way), the other end named."""
        path = {"breadcrumb_id": breadcrumb_id}
        return call("record_edges", RecordEdges, path=path, params={"limit": limit})

    @route
    def record_processing(self, breadcrumb_id: Id) -> Call[RecordProcessing]:
        """Each processing stage's state for the record (embedded, keyed, chunked, ...)."""
        return call("record_processing", RecordProcessing, path={"breadcrumb_id": breadcrumb_id})

    @route
    def add_tags(self, breadcrumb_id: Id, tags: Sequence[str]) -> Call[Changed]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("add_tags", Changed, path=path, body={"tags": list(tags)})

    @route
    def remove_tags(self, breadcrumb_id: Id, tags: Sequence[str]) -> Call[Changed]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("remove_tags", Changed, path=path, body={"tags": list(tags)})

    @route
    def merge_context(self, breadcrumb_id: Id, context: dict[str, Any]) -> Call[Changed]:
        """Merge ``context`` into the record's, recursively (arrays are replaced)."""
        path = {"breadcrumb_id": breadcrumb_id}
        return call("merge_context", Changed, path=path, body={"context": context})

    @route
    def approve(self, breadcrumb_id: Id, *, reason: str | None = None) -> Call[Changed]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("approve", Changed, path=path, body={"reason": reason})

    @route
    def reject(self, breadcrumb_id: Id, *, reason: str | None = None) -> Call[Changed]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("reject", Changed, path=path, body={"reason": reason})

    @route
    def latest_context(
        self, consumer_id: str, *, session: str | None = None
    ) -> Call[AssembledContext]:
        """The newest context assembled for an agent (in ``session``)."""
        path, params = {"consumer_id": consumer_id}, {"session": session}
        return call("latest_context", AssembledContext, path=path, params=params)

    @route
    def context_debug(self, agent_id: str, *, session: str | None = None) -> Call[str]:
        """How the newest context of an agent (in ``session``) was computed, as Markdown:
        signals, knowledge matched, dependencies, filtering and sections."""
        path, params = {"agent_id": agent_id}, {"session": session}
        return call("context_debug", str, path=path, params=params)

    @route
    def graph(
        self,
        *,
        around: Id | None = None,
        context: Id | None = None,
        depth: int | None = None,
        limit: int | None = None,
    ) -> Call[Graph]:
        """The records linked to one record (``around``), or to an assembled context's
        selection (``context``, each selected record with the path that reached it), up to
        ``depth`` hops and ``limit`` records, and the edges between them."""
        params = {
            "around": None if around is None else str(around),
            "context": None if context is None else str(context),
            "depth": depth,
            "limit": limit,
        }
        return call("graph", Graph, params=params)

    @route
    def assemble(self, trigger_id: Id, agent_id: str) -> Call[AssembledContext]:
        """Assemble (and store) ``agent_id``'s context for a stored trigger record, now."""
        body = {"trigger_id": str(trigger_id), "agent_id": agent_id}
        return call("assemble", AssembledContext, body=body)

    @route
    def query_context(
        self,
        query: str | None = None,
        *,
        trigger_id: Id | None = None,
        agent_id: str | None = None,
        agent: dict[str, Any] | None = None,
        session: str | None = None,
        budget: int | None = None,
        debug: bool | None = None,
        no_cache: bool = False,
    ) -> Call[QueriedContext]:
        """A context on demand for a ``query`` text (or a stored ``trigger_id``) and an agent
        (``agent_id``, or an inline ``agent`` definition); nothing is written.
        ``no_cache`` asks the server to assemble afresh."""
        fields = {
            "query": query,
            "trigger_id": trigger_id,
            "agent_id": agent_id,
            "agent": agent,
            "session": session,
            "budget": budget,
            "debug": debug,
        }
        body = ContextQuery(**{key: value for key, value in fields.items() if value is not None})
        headers = {"Cache-Control": "no-cache" if no_cache else None}
        return call("query_context", QueriedContext, body=body, headers=headers)

    @stream
    def events(
        self,
        *,
        schema_name: str | None = None,
        any_tags: Sequence[str] | None = None,
        all_tags: Sequence[str] | None = None,
        session: str | None = None,
        filters: Selector | Mapping[str, Any] | None = None,
        compat: Literal["cairn", "rcrt"] | None = None,
        paths: bool = False,
        since: int | None = None,
        read_timeout_s: float = 45.0,
        max_reconnects: int | None = None,
        stop_after_s: float | None = None,
    ) -> StreamOptions:
        """Live events matching the filters, each once and in order, resuming after a
        disconnect (``since``: start after this stream sequence, replaying what came since).
        ``paths``: also the tenant's debug-path frames, as events whose ``path`` is set."""
        if isinstance(filters, Selector):
            filters = filters.model_dump(mode="json", exclude_none=True)
        params = {
            "schema_name": schema_name,
            "any_tags": any_tags,
            "all_tags": all_tags,
            "session": session,
            "filters": None if filters is None else json.dumps(filters),
            "compat": compat,
            "paths": paths or None,
        }
        return StreamOptions(
            query_params(params),
            since=since,
            read_timeout_s=read_timeout_s,
            max_reconnects=max_reconnects,
            stop_after_s=stop_after_s,
        )
