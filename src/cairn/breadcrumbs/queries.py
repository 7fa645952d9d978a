"""Reads: the LLM view, the full record, lists, vector search and history."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.acl.schemas import AclAction
from cairn.breadcrumbs import repository, vector_search
from cairn.breadcrumbs.context import BreadcrumbService
from cairn.breadcrumbs.repository import Cursor, ListFilter, Row
from cairn.breadcrumbs.schemas import (
    BreadcrumbContextView,
    BreadcrumbFull,
    BreadcrumbListItem,
    HistoryEntry,
    RenderResult,
    SearchHit,
    TransformExplanation,
)
from cairn.db.models import EMBEDDING_DIM
from cairn.errors import BadRequest, InvalidInput, NotFound, Unavailable
from cairn.transforms import Rendered

FLOAT32_MAX = 3.4028234663852886e38  # the largest number a pgvector component can hold

# Either read grant shows the LLM view; only read_full shows every column.
READ_CONTEXT = [AclAction.READ_CONTEXT.value, AclAction.READ_FULL.value]
READ_FULL = [AclAction.READ_FULL.value]


@dataclass(frozen=True, slots=True)
class Page:
    items: list[BreadcrumbListItem]
    next_cursor: str | None


class BreadcrumbReader(BreadcrumbService):
    async def view(
        self, breadcrumb_id: uuid.UUID, *, explain: bool = False
    ) -> BreadcrumbContextView:
        """The LLM view: the context through the record's (or its schema's) llm_hints."""
        row = await self._readable(breadcrumb_id, READ_CONTEXT)
        if row["owner_id"] == self.principal.owner_id:
            owner = self.principal.owner_id
            (rendered,) = await self.transforms.render_many(self.session, owner, [row])
        else:
            # Another tenant's record (an ACL grant): its instance hints apply, but its
            # tenant's schema definitions are not visible from here (row-level security), and
            # looking them up would cache "none" for that tenant.
            rendered = await asyncio.to_thread(self.transforms.render, row, None)
        return llm_view(row, rendered, explain=explain)

    async def render(self, breadcrumb_ids: list[uuid.UUID], *, explain: bool) -> RenderResult:
        """Many LLM views at once: one query for the rows, at most one for their schemas."""
        wanted = list(dict.fromkeys(breadcrumb_ids))
        most = self.transforms.settings.max_render_ids
        if len(wanted) > most:
            raise InvalidInput(f"ids: at most {most} per request")
        rows = await repository.get_many(self.session, self.principal.owner_id, wanted)
        by_id = {row["id"]: row for row in rows}
        found = [by_id[i] for i in wanted if i in by_id]
        views = await self.transforms.render_many(self.session, self.principal.owner_id, found)
        items = [
            llm_view(row, view, explain=explain) for row, view in zip(found, views, strict=True)
        ]
        return RenderResult(items=items, missing=[i for i in wanted if i not in by_id])

    async def full(self, breadcrumb_id: uuid.UUID) -> BreadcrumbFull:
        row = dict(await self._readable(breadcrumb_id, READ_FULL))
        if row["embedding"] is not None:
            row["embedding"] = [float(x) for x in row["embedding"]]
        return BreadcrumbFull.model_validate(row)

    async def page(
        self,
        flt: ListFilter,
        *,
        limit: int | None,
        offset: int,
        cursor: str | None,
        include_context: bool,
    ) -> Page:
        limit = self._limit(limit)
        after = decode_cursor(cursor) if cursor else None
        rows = await repository.list_breadcrumbs(
            self.session, self.principal.owner_id, flt, limit=limit, offset=offset, after=after
        )
        model = BreadcrumbContextView if include_context else BreadcrumbListItem
        items = [model.model_validate(dict(row)) for row in rows]
        next_cursor = encode_cursor(rows[-1]) if len(rows) == limit else None
        return Page(items, next_cursor)

    async def search(
        self,
        flt: ListFilter,
        *,
        q: str | None,
        qvec: str | None,
        nn: int,
        include_context: bool,
    ) -> list[SearchHit]:
        if not 1 <= nn <= self.limits.max_search_nn:
            raise InvalidInput(f"nn must be between 1 and {self.limits.max_search_nn}")
        vector = parse_qvec(qvec) if qvec is not None else await self._embed_query(q)
        rows = await vector_search.search_vector(
            self.session, self.principal.owner_id, vector, flt, nn=nn
        )
        hits = []
        for row in rows:
            hit = SearchHit.model_validate(dict(row))
            hit.context = row["context"] if include_context else None
            hits.append(hit)
        return hits

    async def history(self, breadcrumb_id: uuid.UUID, *, limit: int | None) -> list[HistoryEntry]:
        rows = await repository.history(
            self.session, self.principal.owner_id, breadcrumb_id, limit=self._limit(limit)
        )
        if not rows:
            await self._get(breadcrumb_id)  # 404 for an unknown id rather than []
        return [HistoryEntry.model_validate(dict(row)) for row in rows]

    async def _get(self, breadcrumb_id: uuid.UUID) -> Row:
        row = await repository.get(self.session, self.principal.owner_id, breadcrumb_id)
        if row is None:
            raise NotFound(f"breadcrumb {breadcrumb_id} not found")
        return row

    async def _readable(self, breadcrumb_id: uuid.UUID, actions: list[str]) -> Row:
        """The caller's own record, or another tenant's granted to it by an ACL entry; any
        other id is a 404 (never 403: the answer must not reveal that the record exists)."""
        row = await repository.get(self.session, self.principal.owner_id, breadcrumb_id)
        if row is None:
            row = await repository.get_granted(self.session, self.principal, breadcrumb_id, actions)
        if row is None:
            raise NotFound(f"breadcrumb {breadcrumb_id} not found")
        return row

    async def _embed_query(self, q: str | None) -> list[float]:
        if q is None or not q.strip():
            raise BadRequest("search needs q (text) or qvec (a vector)")
        if "\x00" in q:
            raise InvalidInput("q: NUL characters are not allowed")
        try:
            (vector,) = await self.embedder.embed([q])
        except Exception as error:
            raise Unavailable("the embedding model is not available") from error
        return vector

    def _limit(self, limit: int | None) -> int:
        if limit is None:
            return self.limits.default_list_limit
        if not 1 <= limit <= self.limits.max_list_limit:
            raise InvalidInput(f"limit must be between 1 and {self.limits.max_list_limit}")
        return limit


def llm_view(row: Row, rendered: Rendered, *, explain: bool) -> BreadcrumbContextView:
    view = BreadcrumbContextView.model_validate(dict(row) | {"context": rendered.context})
    if explain:
        view.transform = TransformExplanation(
            source=rendered.source,
            definition_id=rendered.definition_id,
            definition_version=rendered.definition_version,
            applied=rendered.source != "none" and rendered.error is None,
            error=rendered.error,
            warnings=list(rendered.warnings),
            elapsed_ms=rendered.elapsed_ms,
        )
    return view


def parse_qvec(raw: str) -> list[float]:
    """A query vector as RCRT sent it (comma-separated floats) or as a JSON array, scaled to
    unit length: pgvector stores single precision, and the cosine ignores the scale."""
    text = raw.strip()
    try:
        values = json.loads(text) if text.startswith("[") else text.split(",")
        vector = [float(value) for value in values]
    except (ValueError, TypeError, RecursionError) as error:
        raise InvalidInput("qvec: expected comma-separated numbers or a JSON array") from error
    if len(vector) != EMBEDDING_DIM:
        raise InvalidInput(f"qvec: expected {EMBEDDING_DIM} numbers, got {len(vector)}")
    if not all(abs(value) <= FLOAT32_MAX for value in vector):  # NaN compares False too
        raise InvalidInput(f"qvec: numbers must be finite, at most {FLOAT32_MAX:.3e} in size")
    norm = math.hypot(*vector)
    if norm == 0:
        raise InvalidInput("qvec: the zero vector has no direction")
    return [value / norm for value in vector]


def encode_cursor(row: Row) -> str:
    raw = f"{row['updated_at'].isoformat()}|{row['id']}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> Cursor:
    try:
        stamp, ident = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        return Cursor(datetime.fromisoformat(stamp), uuid.UUID(ident))
    except (ValueError, binascii.Error, UnicodeDecodeError) as error:
        raise InvalidInput("cursor: not a cursor this server issued") from error


def tag_list(raw: str | None, field: str, most: int) -> Sequence[str]:
    """``any_tags=a,b`` (comma-separated), as query parameters carry them; at most ``most``
    (each tag is one more array comparison per row the query looks at)."""
    if not raw:
        return ()
    tags = tuple(tag.strip() for tag in raw.split(",") if tag.strip())
    if len(tags) > most:
        raise InvalidInput(f"{field}: {len(tags)} tags, at most {most} are allowed")
    return tags
