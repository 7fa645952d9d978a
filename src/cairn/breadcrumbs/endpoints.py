"""HTTP routes for breadcrumbs (RCRT-compatible paths). Each is one service call."""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Response, status

from cairn.api.deps import ReaderDep, ResourcesDep, WriterDep, require_role
from cairn.breadcrumbs.batch import create_batch
from cairn.breadcrumbs.hybrid import hybrid_search
from cairn.breadcrumbs.queries import tag_list
from cairn.breadcrumbs.repository import ListFilter, Row
from cairn.breadcrumbs.schemas import (
    BatchCreate,
    BatchResult,
    BreadcrumbContextView,
    BreadcrumbCreate,
    BreadcrumbFull,
    BreadcrumbListItem,
    BreadcrumbUpdate,
    ChangedResult,
    CreatedResult,
    HistoryEntry,
    MergeBody,
    RenderRequest,
    RenderResult,
    ReviewBody,
    SearchHit,
    TagsBody,
)
from cairn.errors import BadRequest
from cairn.principal import Role

router = APIRouter(prefix="/breadcrumbs", tags=["breadcrumbs"])
# Reading needs subscriber, writing emitter; reviews (approve/reject) judge others' records.
SUBSCRIBER = require_role(Role.SUBSCRIBER)
EMITTER = require_role(Role.EMITTER)
CURATOR = require_role(Role.CURATOR)

DEGRADED_HEADER = "X-Cairn-Degraded"
_IF_MATCH = re.compile(r'^\s*(?:W/)?"?(\d{1,9})"?\s*$')


def parse_if_match(raw: str | None) -> int | None:
    """``If-Match: 3``, ``"3"`` or ``W/"3"``; anything else is a 400, never ignored."""
    if raw is None:
        return None
    match = _IF_MATCH.match(raw)
    if match is None:
        raise BadRequest(f"If-Match must be a version number, got {raw[:40]!r}")
    return int(match.group(1))


def _changed(row: Row, response: Response) -> ChangedResult:
    response.headers["ETag"] = f'"{row["version"]}"'
    return ChangedResult(id=row["id"], version=row["version"])


@router.post("", status_code=status.HTTP_201_CREATED, dependencies=[EMITTER])
async def create_breadcrumb(
    body: BreadcrumbCreate,
    writer: WriterDep,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> CreatedResult:
    return await writer.create(body, idempotency_key)


@router.get("", dependencies=[SUBSCRIBER])
async def list_breadcrumbs(
    reader: ReaderDep,
    response: Response,
    schema_name: str | None = None,
    tag: str | None = None,
    any_tags: Annotated[str | None, Query(description="comma-separated")] = None,
    all_tags: Annotated[str | None, Query(description="comma-separated")] = None,
    limit: int | None = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    cursor: str | None = None,
    include_context: bool = False,
) -> list[BreadcrumbContextView] | list[BreadcrumbListItem]:
    most = reader.limits.max_query_tags
    flt = ListFilter(
        schema_name, tag, tag_list(any_tags, "any_tags", most), tag_list(all_tags, "all_tags", most)
    )
    page = await reader.page(
        flt, limit=limit, offset=offset, cursor=cursor, include_context=include_context
    )
    if page.next_cursor:
        response.headers["X-Next-Cursor"] = page.next_cursor
    return page.items


@router.get("/search", dependencies=[SUBSCRIBER])
async def search_breadcrumbs(
    reader: ReaderDep,
    resources: ResourcesDep,
    response: Response,
    q: str | None = None,
    qvec: str | None = None,
    nn: int = 5,
    schema_name: str | None = None,
    tag: str | None = None,
    mode: Annotated[
        Literal["vector", "hybrid"],
        Query(description="vector: cosine only; hybrid: cosine and BM25 as context seeds"),
    ] = "vector",
    include_context: bool = False,
) -> list[SearchHit]:
    """``vector`` (the default) ranks by cosine similarity (503 without the embedder);
    ``hybrid`` as the context builder's semantic seeds do, needs ``q``, and without the
    embedder ranks by BM25 alone with ``X-Cairn-Degraded: embedding``."""
    flt = ListFilter(schema_name=schema_name, tag=tag)
    if mode == "vector":
        return await reader.search(flt, q=q, qvec=qvec, nn=nn, include_context=include_context)
    if qvec is not None:
        raise BadRequest("hybrid search takes q (text), not qvec: its words are half the score")
    found = await hybrid_search(
        reader, flt, q=q, nn=nn, include_context=include_context,
        common_words=resources.contexts.common_words,
    )  # fmt: skip
    if found.degraded:
        response.headers[DEGRADED_HEADER] = ",".join(found.degraded)
    return found.hits


@router.post("/render", dependencies=[SUBSCRIBER])
async def render_breadcrumbs(body: RenderRequest, reader: ReaderDep) -> RenderResult:
    """The LLM views of many records at once (at most 100 ids by default)."""
    return await reader.render(body.ids, explain=body.explain)


@router.post("/batch", dependencies=[EMITTER])
async def create_breadcrumbs(
    body: BatchCreate,
    writer: WriterDep,
    atomic: Annotated[
        bool, Query(description="true: one refused record and nothing is written (422)")
    ] = False,
) -> BatchResult:
    """Many creates in one transaction, one result per record in the request's order;
    refused records are not written, the others are (docs/api.md, "Bulk import")."""
    return await create_batch(writer, body.records, atomic=atomic)


@router.get("/{breadcrumb_id}", dependencies=[SUBSCRIBER])
async def get_breadcrumb(
    breadcrumb_id: uuid.UUID,
    reader: ReaderDep,
    response: Response,
    explain: Annotated[bool, Query(description="add how llm_hints shaped the view")] = False,
) -> BreadcrumbContextView:
    view = await reader.view(breadcrumb_id, explain=explain)
    response.headers["ETag"] = f'"{view.version}"'
    return view


@router.get("/{breadcrumb_id}/full", dependencies=[SUBSCRIBER])
async def get_breadcrumb_full(breadcrumb_id: uuid.UUID, reader: ReaderDep) -> BreadcrumbFull:
    return await reader.full(breadcrumb_id)


@router.get("/{breadcrumb_id}/history", dependencies=[SUBSCRIBER])
async def get_history(
    breadcrumb_id: uuid.UUID, reader: ReaderDep, limit: int | None = None
) -> list[HistoryEntry]:
    return await reader.history(breadcrumb_id, limit=limit)


@router.patch("/{breadcrumb_id}", dependencies=[EMITTER])
async def update_breadcrumb(
    breadcrumb_id: uuid.UUID,
    body: BreadcrumbUpdate,
    writer: WriterDep,
    response: Response,
    if_match: Annotated[str | None, Header(alias="If-Match")] = None,
) -> ChangedResult:
    row = await writer.update(breadcrumb_id, body, parse_if_match(if_match))
    return _changed(row, response)


@router.delete("/{breadcrumb_id}", dependencies=[EMITTER])
async def delete_breadcrumb(breadcrumb_id: uuid.UUID, writer: WriterDep) -> ChangedResult:
    row = await writer.delete(breadcrumb_id)
    return ChangedResult(id=row["id"], version=row["version"])


@router.post("/{breadcrumb_id}/tags/add", dependencies=[EMITTER])
async def add_tags(
    breadcrumb_id: uuid.UUID, body: TagsBody, writer: WriterDep, response: Response
) -> ChangedResult:
    return _changed(await writer.add_tags(breadcrumb_id, body.tags), response)


@router.post("/{breadcrumb_id}/tags/remove", dependencies=[EMITTER])
async def remove_tags(
    breadcrumb_id: uuid.UUID, body: TagsBody, writer: WriterDep, response: Response
) -> ChangedResult:
    return _changed(await writer.remove_tags(breadcrumb_id, body.tags), response)


@router.post("/{breadcrumb_id}/context/merge", dependencies=[EMITTER])
async def merge_context(
    breadcrumb_id: uuid.UUID, body: MergeBody, writer: WriterDep, response: Response
) -> ChangedResult:
    return _changed(await writer.merge_context(breadcrumb_id, body.context), response)


@router.post("/{breadcrumb_id}/approve", dependencies=[CURATOR])
async def approve(
    breadcrumb_id: uuid.UUID, writer: WriterDep, response: Response, body: ReviewBody | None = None
) -> ChangedResult:
    reason = body.reason if body else None
    return _changed(await writer.review(breadcrumb_id, approve=True, reason=reason), response)


@router.post("/{breadcrumb_id}/reject", dependencies=[CURATOR])
async def reject(
    breadcrumb_id: uuid.UUID, writer: WriterDep, response: Response, body: ReviewBody | None = None
) -> ChangedResult:
    reason = body.reason if body else None
    return _changed(await writer.review(breadcrumb_id, approve=False, reason=reason), response)
