"""Writes: create, update, delete and the tag/merge operations.

Every change bumps ``version`` with a compare-and-set, writes a history row and an outbox
event in the caller's transaction, and keeps ``llm_text``, the embedding and the keyword
pointers in step with the content as its ``llm_hints`` render it. Hints that do not compile
are refused (422) before anything is written; a write of a schema definition makes every
process-local cache of that schema's hints forget it once the transaction commits.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.acl import repository as acl
from cairn.acl.schemas import AclAction
from cairn.breadcrumbs import ops, repository
from cairn.breadcrumbs.chunks import (
    ChunkWindow,
    EmbeddedChunk,
    embed_chunks,
    needs_chunks,
    replace_chunks,
)
from cairn.breadcrumbs.context import BreadcrumbService
from cairn.breadcrumbs.derived import NOT_EMBEDDED_SCHEMAS, render_llm_texts
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.schemas import BreadcrumbCreate, BreadcrumbUpdate, CreatedResult
from cairn.breadcrumbs.validation import (
    canonical_json,
    check_context,
    check_description,
    check_hints,
    check_tags,
    check_text,
    check_title,
    checksum,
)
from cairn.config import Limits
from cairn.context.definitions import check_definition
from cairn.context.domain_store import labels_for, store_domains
from cairn.context.domains import DOMAINS_SCHEMA
from cairn.edges import repository as edges
from cairn.embedding import Embedder, entity_keywords, tag_pointers
from cairn.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from cairn.events import outbox
from cairn.events.payloads import ChangeKind, change_event
from cairn.principal import Principal, Role
from cairn.processing import record_outcomes
from cairn.processing.stages import (
    CHUNKED,
    DONE_OUTCOME,
    NOT_NEEDED_OUTCOME,
    PENDING,
    Outcome,
    failed,
)
from cairn.processing.write_outcomes import (
    Derived,
    derived_outcomes,
    not_embedded_outcomes,
    unchanged_outcomes,
)
from cairn.reindex.enqueue import enqueue_for_hints
from cairn.transforms import Transforms, defined_schemas, is_definition

log = logging.getLogger(__name__)

MAX_CAS_ATTEMPTS = 5
MAX_IDEMPOTENCY_KEY_LENGTH = 255
EMBED_TIMEOUT_S = 10.0
TEXT_FIELDS = ("title", "description", "context", "llm_hints", "schema_name")
HINT_FIELDS = ("llm_hints", "context", "schema_name")

Change = Callable[[Row], dict[str, Any]]
Chunks = list[EmbeddedChunk] | None  # None: the text did not change, nor may its chunks


class BreadcrumbWriter(BreadcrumbService):
    def __init__(
        self,
        session: AsyncSession,
        embedder: Embedder,
        limits: Limits,
        principal: Principal,
        transforms: Transforms | None = None,
        *,
        chunk_window: ChunkWindow | None = None,
    ) -> None:
        super().__init__(session, embedder, limits, principal, transforms)
        self.chunk_window = chunk_window or ChunkWindow()

    async def create(self, body: BreadcrumbCreate, idempotency_key: str | None) -> CreatedResult:
        values = self._validated(body.model_dump(exclude_unset=False))
        self.transforms.check_record(values)
        check_definition(values["schema_name"], values["context"])
        request_hash = checksum(canonical_json(body.model_dump(mode="json")))
        if idempotency_key is not None:
            _check_idempotency_key(idempotency_key)
            replay = await self._replay(idempotency_key, request_hash)
            if replay is not None:
                return replay
        new_id = uuid.uuid4()
        derived = await self._derived(values, tags=values["tags"], new_id=new_id)
        values |= derived.columns
        chunks = await self._chunks(values, derived)
        result = CreatedResult(id=new_id, version=1)
        if idempotency_key is not None:
            claimed = await repository.claim_idempotency_key(
                self.session,
                self.principal.owner_id,
                idempotency_key,
                breadcrumb_id=new_id,
                request_hash=request_hash,
                response=result.model_dump(mode="json"),
            )
            if not claimed:  # a concurrent request with the same key committed first
                replay = await self._replay(idempotency_key, request_hash)
                assert replay is not None
                return replay
        actor = self.principal.actor
        row = await repository.insert_breadcrumb(
            self.session,
            {**values, "id": new_id, "owner_id": self.principal.owner_id}
            | {"created_by": actor, "updated_by": actor},
        )
        if chunks:  # a new record has no chunks to replace
            await self._store_chunks(row, chunks)
        await self._record(row, ChangeKind.created, change="create")
        await self._processed(row, derived)
        await self._definitions_changed(None, row)
        await self._domains_written(row)
        return result

    async def update(
        self, breadcrumb_id: uuid.UUID, body: BreadcrumbUpdate, if_match: int | None
    ) -> Row:
        patch = body.model_dump(exclude_unset=True)
        for field in ("title", "context", "tags", "visibility", "sensitivity"):
            if field in patch and patch[field] is None:
                raise InvalidInput(f"{field}: may not be null")
        validated = self._validated(patch)
        return await self.mutate(breadcrumb_id, lambda _: dict(validated), "update", if_match)

    async def delete(self, breadcrumb_id: uuid.UUID) -> Row:
        current = await self._current(breadcrumb_id, lock=True)
        await self._authorize(current, AclAction.DELETE)
        await edges.lock_edges_of(self.session, self.principal.owner_id, breadcrumb_id)
        row = await repository.delete_breadcrumb(
            self.session, self.principal.owner_id, breadcrumb_id
        )
        if row is None:
            raise NotFound(f"breadcrumb {breadcrumb_id} not found")
        deleted = dict(row) | {"updated_at": datetime.now(UTC), "updated_by": self.principal.actor}
        await outbox.enqueue(
            self.session, change_event(ChangeKind.deleted, deleted, change="delete")
        )
        await self._definitions_changed(row, None)
        return row

    async def add_tags(self, breadcrumb_id: uuid.UUID, tags: list[str]) -> Row:
        new = check_tags(tags, self.limits)
        return await self.mutate(
            breadcrumb_id, lambda row: {"tags": ops.add_tags(row["tags"], new)}, "tags.add"
        )

    async def remove_tags(self, breadcrumb_id: uuid.UUID, tags: list[str]) -> Row:
        gone = check_tags(tags, self.limits)
        return await self.mutate(
            breadcrumb_id, lambda row: {"tags": ops.remove_tags(row["tags"], gone)}, "tags.remove"
        )

    async def merge_context(self, breadcrumb_id: uuid.UUID, context: dict[str, Any]) -> Row:
        def merged(row: Row) -> dict[str, Any]:
            return self._validated({"context": ops.deep_merge(row["context"], context)})

        return await self.mutate(breadcrumb_id, merged, "context.merge")

    async def review(self, breadcrumb_id: uuid.UUID, *, approve: bool, reason: str | None) -> Row:
        retag = ops.approve_tags if approve else ops.reject_tags
        change = "approve" if approve else "reject"
        if reason is not None:
            check_text(reason, "reason")
        return await self.mutate(
            breadcrumb_id, lambda row: {"tags": retag(row["tags"])}, change, reason=reason
        )

    async def mutate(
        self,
        breadcrumb_id: uuid.UUID,
        change: Change,
        change_name: str,
        if_match: int | None = None,
        *,
        reason: str | None = None,
    ) -> Row:
        """Apply ``change`` to the current row with a compare-and-set on its version.

        With ``If-Match`` a moved version is a 412. Without it the row is locked while the
        change is computed, so concurrent tag operations queue instead of losing each
        other's work.
        """
        for _ in range(MAX_CAS_ATTEMPTS):
            current = await self._current(breadcrumb_id, lock=if_match is None)
            await self._authorize(current, AclAction.UPDATE)
            if if_match is not None and current["version"] != if_match:
                raise PreconditionFailed(
                    f"version is {current['version']}, If-Match asked for {if_match}"
                )
            values = change(current)
            if "context" in values or "schema_name" in values:
                merged = {**current, **values}
                check_definition(merged["schema_name"], merged["context"])
            if any(field in values for field in HINT_FIELDS):
                self.transforms.check_record({**current, **values})
            derived = await self._derived(values, tags=values.get("tags"), current=current)
            values |= derived.columns
            chunks = await self._chunks(values, derived)
            values["updated_by"] = self.principal.actor
            row = await repository.update_if_version(
                self.session, self.principal.owner_id, breadcrumb_id, current["version"], values
            )
            if row is not None:
                await self._store_chunks(row, chunks)
                await self._record(row, ChangeKind.updated, change=change_name, reason=reason)
                await self._processed(row, derived)
                await self._definitions_changed(current, row)
                await self._domains_written(row)
                return row
            if if_match is not None:
                raise PreconditionFailed(f"version {if_match} was changed concurrently")
        raise Conflict("the record kept changing concurrently; retry the request")

    def _validated(self, values: dict[str, Any]) -> dict[str, Any]:
        """Check limits on whichever fields are present; returns the columns to write."""
        out = dict(values)
        if "title" in out:
            check_title(out["title"], self.limits)
        if "description" in out:
            check_description(out["description"], self.limits)
        if "tags" in out:
            out["tags"] = check_tags(out["tags"], self.limits)
        if "context" in out:
            payload = check_context(out["context"], self.limits)
            out["checksum"] = checksum(payload)
            out["size_bytes"] = len(payload)
        if "llm_hints" in out:
            check_hints(out["llm_hints"], self.limits)
        for field in ("semantic_version",):
            if out.get(field) is not None:
                check_text(out[field], field)
        for field in ("visibility", "sensitivity"):
            if out.get(field) is not None:
                out[field] = str(out[field].value)
        if out.get("ttl") is not None and out["ttl"].tzinfo is None:
            out["ttl"] = out["ttl"].replace(tzinfo=UTC)
        return out

    async def _derived(
        self,
        values: dict[str, Any],
        *,
        tags: list[str] | None,
        current: Row | None = None,
        new_id: uuid.UUID | None = None,
    ) -> Derived:
        """``llm_text``, embedding and keyword pointers for the changed content, and what
        became of each processing stage."""
        merged: Mapping[str, Any] = {**(current or {}), **values}
        text_changed = current is None or any(field in values for field in TEXT_FIELDS)
        if not text_changed and tags is None:
            return Derived({}, unchanged_outcomes())
        if merged.get("schema_name") in NOT_EMBEDDED_SCHEMAS:
            columns = {
                "entity_keywords": tag_pointers(merged["tags"]),
                "llm_text": None,
                "embedding": None,
            } | _unlabelled(current)
            return Derived(columns, not_embedded_outcomes())
        llm_text = await self._llm_text(merged, new_id)
        out: dict[str, Any] = {"entity_keywords": entity_keywords(merged["tags"], llm_text)}
        embed_error: BaseException | None = None
        if current is None or llm_text != current["llm_text"]:
            out["llm_text"] = llm_text
            out["embedding"], embed_error = await self._embed(llm_text)
        labels = await labels_for(
            self.session, self.principal.owner_id, self.embedder, {**merged, **out}
        )
        if labels.version is not None or (current is not None and current["domains_version"]):
            out |= {"domains": list(labels.domains), "domains_version": labels.version}
        embedded = embed_error or "embedding" in out
        return Derived(out, derived_outcomes(embedded=embedded, labelled=labels.version))

    async def _llm_text(self, record: Mapping[str, Any], new_id: uuid.UUID | None) -> str:
        """The text of the record as its hints render it. Without a version: the write may
        still lose a compare-and-set, so its instance hints are not cached."""
        identity = {"id": new_id or record["id"], "version": None}
        as_written = {"created_at": datetime.now(UTC), **record, **identity}
        owner = self.principal.owner_id
        (text,) = await render_llm_texts(self.transforms, self.session, owner, [as_written])
        return text

    async def _definitions_changed(self, before: Row | None, after: Row | None) -> None:
        """A schema definition was written: forget the hints cached for what it defines, and
        have the records of each schema whose hints changed reindexed (same transaction)."""
        rows = [row for row in (before, after) if row is not None and is_definition(row)]
        names = set().union(*(defined_schemas(row["tags"]) for row in rows))
        if names:
            self.transforms.invalidate_after_commit(self.session, names)
            await enqueue_for_hints(self.session, self.principal.owner_id, before, after)

    async def _domains_written(self, row: Row) -> None:
        """A domains definition: its example centroids are embedded now and stored, for the
        worker (which runs no encoder) and the writes that follow."""
        if row["schema_name"] == DOMAINS_SCHEMA:
            owner, version = self.principal.owner_id, row["checksum"]
            await store_domains(self.session, owner, version, row["context"], self.embedder)

    async def _embed(self, text: str) -> tuple[list[float] | None, BaseException | None]:
        """The vector, or the error it failed with (the write goes on without one; the
        processing retry job embeds it later)."""
        try:
            async with asyncio.timeout(EMBED_TIMEOUT_S):
                (vector,) = await self.embedder.embed([text])
            return vector, None
        except TimeoutError:
            log.warning("embedding timed out; stored without one, will retry")
            return None, TimeoutError(f"embedding took longer than {EMBED_TIMEOUT_S:.0f} s")
        except Exception as error:
            log.warning("embedding failed; stored without one, will retry", exc_info=True)
            return None, error

    async def _processed(self, row: Row, derived: Derived) -> None:
        """The write's processing state, in its transaction (one statement)."""
        await record_outcomes(self.session, self.principal.owner_id, row["id"], derived.outcomes)

    async def _chunks(self, values: dict[str, Any], derived: Derived) -> Chunks:
        """The chunks of a changed long ``llm_text``, with the ``chunked`` stage's outcome.
        A failure never fails the write: the stage is recorded as failed (or pending, when
        the record's own vector failed too) and the retry job embeds the chunks later; the
        old chunks go with the text they were cut from."""
        if "llm_text" not in values:
            return None
        text = values["llm_text"]
        if not needs_chunks(text, self.embedder, self.chunk_window):
            derived.outcomes[CHUNKED] = NOT_NEEDED_OUTCOME
            return []
        if values["embedding"] is None:  # the embedder is failing: leave it to the retry
            derived.outcomes[CHUNKED] = Outcome(PENDING, due_in_s=0.0)
            return []
        try:
            async with asyncio.timeout(EMBED_TIMEOUT_S):
                chunks = await embed_chunks(text, self.embedder, self.chunk_window)
        except Exception as error:
            log.warning("embedding chunks failed; stored without them, will retry", exc_info=True)
            derived.outcomes[CHUNKED] = failed(error)
            return []
        derived.outcomes[CHUNKED] = DONE_OUTCOME
        return chunks

    async def _store_chunks(self, row: Row, chunks: Chunks) -> None:
        if chunks is not None:
            await replace_chunks(self.session, self.principal.owner_id, row["id"], chunks)

    async def _current(self, breadcrumb_id: uuid.UUID, *, lock: bool = False) -> Row:
        row = await repository.get(
            self.session, self.principal.owner_id, breadcrumb_id, for_update=lock
        )
        if row is None:
            raise NotFound(f"breadcrumb {breadcrumb_id} not found")
        return row

    async def _authorize(self, row: Row, action: AclAction) -> None:
        """Curators change anything in their tenant; other agents change the records they
        created, and those an ACL entry grants them ``update`` / ``delete`` on."""
        principal = self.principal
        if principal.has(Role.CURATOR) or row["created_by"] == principal.actor:
            return
        if await acl.is_granted(self.session, principal, row["id"], [action.value]):
            return
        raise Forbidden(
            f"breadcrumb {row['id']} was created by another agent; {action.value} needs the "
            "curator role or an ACL grant"
        )

    async def _record(
        self, row: Row, kind: ChangeKind, *, change: str, reason: str | None = None
    ) -> None:
        await repository.insert_history(self.session, row, change=change)
        event = change_event(kind, row, change=change)
        if reason is not None:
            event.payload["reason"] = reason
        await outbox.enqueue(self.session, event)

    async def _replay(self, key: str, request_hash: str) -> CreatedResult | None:
        found = await repository.find_idempotency_key(self.session, self.principal.owner_id, key)
        if found is None:
            return None
        if found["request_hash"] != request_hash:
            raise Conflict(f"Idempotency-Key '{key}' was used with a different request body")
        return CreatedResult.model_validate(found["response"])


def _unlabelled(current: Row | None) -> dict[str, Any]:
    """Assembled contexts carry no labels (a record may become one by an update)."""
    if current is None or not current["domains_version"]:
        return {}
    return {"domains": [], "domains_version": None}


def _check_idempotency_key(key: str) -> None:
    if not key.strip() or len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
        raise InvalidInput(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
    check_text(key, "Idempotency-Key")
