"""Writes of records Cairn derives itself (an assembled context): one per id, upserted.

Made for large documents: the context is serialized once and that text is what is stored,
checksummed and sized; history and outbox copy it inside the database, and the row is never
read back whole. Otherwise the rules of every write hold: limits, hints, schema definitions,
authorization, a version-checked replace, history and an outbox event.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from cairn.acl.schemas import AclAction
from cairn.breadcrumbs import replace, repository
from cairn.breadcrumbs.repository import Row
from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.breadcrumbs.service import MAX_CAS_ATTEMPTS, BreadcrumbWriter
from cairn.breadcrumbs.validation import check_json, checksum
from cairn.context.definitions import check_definition
from cairn.errors import Conflict, PayloadTooLarge
from cairn.events.payloads import ChangeKind, change_event
from cairn.principal import Role
from cairn.processing.write_outcomes import Derived


class GeneratedWriter(BreadcrumbWriter):
    async def put_generated(
        self,
        breadcrumb_id: uuid.UUID,
        body: BreadcrumbCreate,
        *,
        unless_later: str | None,
        keep_versions: int = 0,
        rider: replace.Rider | None = None,
    ) -> Row:
        """Create the record with this id or replace it: an upsert for records Cairn derives
        itself (an assembled context), one per id. A stored record whose ``context`` has a
        later ISO time under ``unless_later`` is kept and returned: an older event handled
        late must not overwrite a newer result. None: the caller orders its writes itself
        (a debug path, written under a per-session lock). The record's history keeps its
        newest ``keep_versions`` versions (0: all). ``rider``: one more row the write makes
        (an assembly's log entry), in its statement when the write is one."""
        values, context_json, derived = await self._generated_values(breadcrumb_id, body)
        owner = self.principal.owner_id
        ordered_by = body.context.get(unless_later) if unless_later else None
        if replace.applies(values, ordered_by, ordered=unless_later is not None):
            row = await replace.upsert_generated(
                self.session, (owner, breadcrumb_id), values, context_json, derived.outcomes,
                writer=(self.principal.actor, self.principal.has(Role.CURATOR)),
                ordering=(unless_later, ordered_by) if unless_later else None,
                keep_versions=keep_versions, rider=rider,
            )  # fmt: skip
            if row is not None:
                return {**row, "context": body.context}
        row = await self._put_generated(
            breadcrumb_id, body, values, context_json, derived, unless_later
        )
        if keep_versions > 0:
            await repository.prune_history(
                self.session, owner, breadcrumb_id,
                below_version=row["version"] - keep_versions + 1,
            )  # fmt: skip
        if rider is not None:
            await replace.send_alone(self.session, rider)
        return row

    async def _put_generated(
        self,
        breadcrumb_id: uuid.UUID,
        body: BreadcrumbCreate,
        values: dict[str, Any],
        context_json: str,
        derived: Derived,
        unless_later: str | None = None,
    ) -> Row:
        """The general path: lock, compare, then insert or compare-and-set."""
        owner = self.principal.owner_id
        ordered_by = body.context.get(unless_later) if unless_later else None
        for _ in range(MAX_CAS_ATTEMPTS):
            stored = await repository.lock_for_replace(
                self.session, owner, breadcrumb_id, unless_later or ""
            )
            if stored is not None and _later(stored["stored"], ordered_by):
                kept = await repository.get(self.session, owner, breadcrumb_id)
                assert kept is not None  # locked above
                return kept
            if stored is None:
                created = {
                    "id": breadcrumb_id,
                    "owner_id": owner,
                    "created_by": self.principal.actor,
                }
                row = await repository.insert_serialized_if_absent(
                    self.session, values | created, context_json
                )
            else:
                await self._authorize(stored, AclAction.UPDATE)
                row = await repository.replace_serialized_if_version(
                    self.session, owner, breadcrumb_id, stored["version"], values, context_json
                )
            if row is not None:
                written = {**row, "context": body.context}
                await self._record_stored(written, created=stored is None)
                await self._processed(written, derived.outcomes)
                return written
        raise Conflict("the record kept changing concurrently; retry the request")

    async def _generated_values(
        self, breadcrumb_id: uuid.UUID, body: BreadcrumbCreate
    ) -> tuple[dict[str, Any], str, Derived]:
        """``put_generated``'s columns but the context, the context as JSON text, and the
        derived columns with their processing outcomes."""
        context_json = _generated_json(body.context)
        payload = context_json.encode()
        if len(payload) > self.limits.max_context_bytes:
            raise PayloadTooLarge(
                f"context: {len(payload)} bytes, the limit is {self.limits.max_context_bytes}"
            )
        values = self._validated(body.model_dump(exclude={"context"}))
        values |= {"checksum": checksum(payload), "size_bytes": len(payload)}
        self.transforms.check_record(values | {"context": body.context})
        check_definition(values["schema_name"], body.context)
        derived = await self._derived(values, tags=values["tags"], new_id=breadcrumb_id)
        values |= derived.columns
        values["updated_by"] = self.principal.actor
        return values, context_json, derived

    async def _record_stored(self, row: Row, *, created: bool) -> None:
        """``_record`` for a row written with ``put_generated``, whose history row and event
        take the context from the stored record."""
        kind, change = (
            (ChangeKind.created, "create") if created else (ChangeKind.updated, "replace")
        )
        event = change_event(kind, row, change=change)
        await repository.record_stored_change(self.session, event, row["id"], change=change)
        await self._definitions_changed(None, row)


def _generated_json(context: dict[str, Any]) -> str:
    """The canonical JSON of a context Cairn built: JSON-native values of a fixed shape,
    nested a few levels (far from MAX_JSON_DEPTH), so of ``check_json``'s checks only two
    can fail, and both show in the serialized text: a NUL (record text rendered by a
    template) is escaped as \\u0000, a non-finite number fails to serialize. Either way
    ``check_json`` then names the path; the common case never walks the document."""
    try:
        text = json.dumps(
            context, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except ValueError:
        check_json(context, "context")
        raise
    if "\\u0000" in text:  # or an escaped backslash before "u0000": check_json tells
        check_json(context, "context")
    return text


def _later(stored: object, fresh: object) -> bool:
    if not isinstance(stored, str) or not isinstance(fresh, str):
        return False
    return datetime.fromisoformat(stored) > datetime.fromisoformat(fresh)
