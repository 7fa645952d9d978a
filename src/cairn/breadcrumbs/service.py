"""Writes: create, update, delete and the tag/merge operations.

Every change bumps ``version`` with a compare-and-set, writes a history row and an outbox
event in the caller's transaction, and keeps ``llm_text``, the embedding and the keyword
pointers in step with the content as its ``llm_hints`` render it. Hints that do not compile
are refused (422) before anything is written; a write of a schema definition makes every
process-local cache of that schema's hints forget it once the transaction commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cairn.acl import repository as acl
from cairn.acl.schemas import AclAction
from cairn.breadcrumbs import idempotency, ops, repository
from cairn.breadcrumbs.chunks import replace_chunks
from cairn.breadcrumbs.derived import DerivingService, NewRecord
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
from cairn.context.definitions import check_definition
from cairn.context.domain_store import store_domains
from cairn.context.domains import DOMAINS_SCHEMA
from cairn.edges import repository as edges
from cairn.errors import Conflict, Forbidden, InvalidInput, NotFound, PreconditionFailed
from cairn.events import outbox
from cairn.events.payloads import ChangeKind, change_event
from cairn.principal import Role
from cairn.processing import Outcome, record_outcomes
from cairn.reindex.enqueue import enqueue_for_hints
from cairn.transforms import defined_schemas, is_definition

MAX_CAS_ATTEMPTS = 5
HINT_FIELDS = ("llm_hints", "context", "schema_name")

Change = Callable[[Row], dict[str, Any]]


@dataclass(slots=True)
class PendingCreate(NewRecord):
    """A create that passed every check and found no earlier request under its key."""

    request_hash: str
    idempotency_key: str | None


class BreadcrumbWriter(DerivingService):
    async def create(self, body: BreadcrumbCreate, idempotency_key: str | None) -> CreatedResult:
        pending = await self.prepare_create(body, idempotency_key)
        if isinstance(pending, CreatedResult):
            return pending
        await self.derive_created([pending])
        return await self.insert_created(pending)

    async def prepare_create(
        self, body: BreadcrumbCreate, idempotency_key: str | None
    ) -> PendingCreate | CreatedResult:
        """Every check of a create, before anything is computed or written; a replay of an
        earlier request with the same key returns that request's answer instead."""
        values = self._validated(body.model_dump(exclude_unset=False))
        self.transforms.check_record(values)
        check_definition(values["schema_name"], values["context"])
        request_hash = checksum(canonical_json(body.model_dump(mode="json")))
        if idempotency_key is not None:
            idempotency.check_key(idempotency_key)
            owner = self.principal.owner_id
            replay = await idempotency.replay(self.session, owner, idempotency_key, request_hash)
            if replay is not None:
                return replay
        return PendingCreate(uuid.uuid4(), values, request_hash, idempotency_key)

    async def insert_created(self, pending: PendingCreate) -> CreatedResult:
        """Write a prepared create: its key, row, history and outbox event. A refusal (its
        key taken meanwhile by a request with another body) comes before the first write."""
        result = CreatedResult(id=pending.id, version=1)
        key = pending.idempotency_key
        if key is not None:
            claimed = await repository.claim_idempotency_key(
                self.session,
                self.principal.owner_id,
                key,
                breadcrumb_id=pending.id,
                request_hash=pending.request_hash,
                response=result.model_dump(mode="json"),
            )
            if not claimed:  # a concurrent request with the same key committed first
                owner, request_hash = self.principal.owner_id, pending.request_hash
                replay = await idempotency.replay(self.session, owner, key, request_hash)
                assert replay is not None
                return replay
        actor = self.principal.actor
        row = await repository.insert_breadcrumb(
            self.session,
            {**pending.values, "id": pending.id, "owner_id": self.principal.owner_id}
            | {"created_by": actor, "updated_by": actor},
        )
        if pending.chunks:  # a new record has no chunks to replace
            await replace_chunks(self.session, self.principal.owner_id, row["id"], pending.chunks)
        await self._record(row, ChangeKind.created, change="create")
        await self._processed(row, pending.outcomes)
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
            chunks = await self._chunks(values, derived.outcomes)
            values["updated_by"] = self.principal.actor
            row = await repository.update_if_version(
                self.session, self.principal.owner_id, breadcrumb_id, current["version"], values
            )
            if row is not None:
                if chunks is not None:  # the text changed: its old chunks go with it
                    owner = self.principal.owner_id
                    await replace_chunks(self.session, owner, breadcrumb_id, chunks)
                await self._record(row, ChangeKind.updated, change=change_name, reason=reason)
                await self._processed(row, derived.outcomes)
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

    async def _definitions_changed(self, before: Row | None, after: Row | None) -> None:
        """A schema definition was written: forget the hints cached for what it defines, and
        have the records of each schema whose hints changed reindexed (same transaction)."""
        rows = [row for row in (before, after) if row is not None and is_definition(row)]
        names = set().union(*(defined_schemas(row["tags"]) for row in rows))
        if names:
            self.transforms.invalidate_after_commit(self.session, names)
            await enqueue_for_hints(self.session, self.principal.owner_id, before, after)

    async def _processed(self, row: Row, outcomes: dict[str, Outcome]) -> None:
        """The write's processing state, in its transaction (one statement)."""
        await record_outcomes(self.session, self.principal.owner_id, row["id"], outcomes)

    async def _domains_written(self, row: Row) -> None:
        """A domains definition: its example centroids are embedded now and stored, for the
        worker (which runs no encoder) and the writes that follow."""
        if row["schema_name"] == DOMAINS_SCHEMA:
            owner, version = self.principal.owner_id, row["checksum"]
            await store_domains(self.session, owner, version, row["context"], self.embedder)

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
        event = change_event(kind, row, change=change)
        if reason is not None:
            event.payload["reason"] = reason
        # History row and outbox event in one statement, both copying the stored record.
        await repository.record_stored_change(self.session, event, row["id"], change=change)
