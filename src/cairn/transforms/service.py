"""``Transforms``: the one object the API and the worker hold to render records.

- :meth:`check` / :meth:`check_record` — on write: hints that do not compile are a 422.
- :meth:`render_many` — on read: one query for the schema definitions the batch needs (none
  when cached), then every record rendered in a worker thread, with no I/O per record.
- :meth:`invalidate` / :meth:`invalidate_after_commit` / :meth:`invalidate_for_event` —
  schema definitions changed: the next render resolves them again.

Compiled hints are cached by (source of the hints, its version): ``("instance", record id,
record version)`` or ``("schema", definition id, definition version)``; templates are
cached by their text underneath, so equal templates compile once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.config import TransformSettings
from cairn.errors import InvalidInput
from cairn.transforms import repository
from cairn.transforms.cache import LRU
from cairn.transforms.definitions import (
    SCHEMA_DEFINITION,
    Definition,
    DefinitionCache,
    is_definition,
)
from cairn.transforms.engine import TemplateEngine
from cairn.transforms.hints import CompiledHints, HintsError, compile_hints
from cairn.transforms.render import Rendered, Source, apply_hints

log = logging.getLogger(__name__)

# A breadcrumb row, or any mapping with: id, version (None: unsaved, hints not cached), title,
# tags, schema_name, created_at, context, llm_hints.
Record = Mapping[Any, Any]
HintsKey = tuple[str, uuid.UUID, int]


class Transforms:
    def __init__(self, settings: TransformSettings | None = None) -> None:
        self.settings = settings or TransformSettings()
        self.engine = TemplateEngine(self.settings)
        self.definitions = DefinitionCache(self.settings.schema_cache_ttl_s)
        self._hints: LRU[HintsKey, CompiledHints | str] = LRU(self.settings.hints_cache_size)

    # --- writes ---------------------------------------------------------------------------

    def check(self, hints: Any, where: str = "llm_hints") -> CompiledHints:
        """Compile ``hints`` or raise a 422 that names the broken rule."""
        try:
            return compile_hints(hints, self.engine, max_rules=self.settings.max_rules)
        except HintsError as error:
            raise InvalidInput(f"{where}: {error}") from None

    def check_record(self, record: Record) -> None:
        """Instance hints, and on a schema definition the hints it gives its schema."""
        if record.get("llm_hints") is not None:
            self.check(record["llm_hints"], "llm_hints")
        if is_definition(record) and isinstance(record.get("context"), Mapping):
            nested = record["context"].get("llm_hints")
            if nested is not None:
                self.check(nested, "context.llm_hints")

    # --- reads ----------------------------------------------------------------------------

    async def render_many(
        self, session: AsyncSession, owner_id: uuid.UUID, records: Sequence[Record]
    ) -> list[Rendered]:
        """Render a batch: at most one query (for uncached schema definitions)."""
        definitions = await self.definitions_for(session, owner_id, records)
        return await self.render_resolved(records, definitions)

    async def definitions_for(
        self, session: AsyncSession, owner_id: uuid.UUID, records: Iterable[Record]
    ) -> dict[str, Definition | None]:
        """The schema definitions rendering ``records`` needs (one query for the uncached)."""
        names = {r["schema_name"] for r in records if self._uses_schema_hints(r)}
        return await self.resolve(session, owner_id, names)

    async def render_resolved(
        self, records: Sequence[Record], definitions: Mapping[str, Definition | None]
    ) -> list[Rendered]:
        """Render a batch whose definitions are resolved, in a worker thread; no I/O."""
        if not records:
            return []
        return await asyncio.to_thread(self._render_all, records, definitions)

    async def resolve(
        self, session: AsyncSession, owner_id: uuid.UUID, names: Iterable[str]
    ) -> dict[str, Definition | None]:
        generation = self.definitions.generation
        found, missing = self.definitions.lookup(owner_id, set(names))
        if missing:
            rows = await repository.newest_definitions(session, owner_id, missing)
            fetched = {n: Definition.from_row(rows[n]) if n in rows else None for n in missing}
            self.definitions.store(owner_id, fetched, generation)
            found.update(fetched)
        return found

    def render(self, record: Record, definition: Definition | None) -> Rendered:
        """One record, given its schema's definition (or None); no I/O."""
        context = dict(record.get("context") or {})
        found = _hints_of(record, definition)
        if found is None:
            return Rendered(context)
        source, key, raw = found
        origin = _origin(source, definition)
        hints = self._compiled(key, raw)
        if isinstance(hints, str):
            return Rendered(context, source, *origin, error=f"hints do not compile: {hints}")
        applied = apply_hints(self.engine, self.settings, hints, record)
        if applied.error:
            log.warning("llm_hints of %s fell back: %s", record.get("id"), applied.error)
        return Rendered(
            applied.context, source, *origin, applied.replaced, applied.error,
            hints.warnings, applied.elapsed_ms,
        )  # fmt: skip

    def render_key(self, record: Record, definition: Definition | None) -> Hashable | None:
        """Everything besides the record's own content (its id and version) that decides how
        :meth:`render` renders it: which hints, at which version. None when the record is
        not saved (no version), so its rendering must not be cached."""
        if record.get("version") is None:
            return None
        found = _hints_of(record, definition)
        return ("plain",) if found is None else found[1]

    # --- invalidation ---------------------------------------------------------------------

    def invalidate(self, schema_names: str | Iterable[str] | None = None) -> None:
        """Forget the cached definitions of ``schema_names`` (all when None). Instance hints
        need no invalidation: they are cached by record version, which every write bumps."""
        if isinstance(schema_names, str):
            schema_names = [schema_names]
        self.definitions.invalidate(None if schema_names is None else list(schema_names))

    def invalidate_after_commit(self, session: AsyncSession, schema_names: Iterable[str]) -> None:
        """For a write of a definition: forget now, and again once the transaction commits
        (a read between the two may have cached what it saw before the commit)."""
        names = list(schema_names)
        self.invalidate(names)

        def committed(_: Any) -> None:
            self.invalidate(names)

        event.listen(session.sync_session, "after_commit", committed, once=True)

    def invalidate_for_event(self, payload: Mapping[Any, Any]) -> bool:
        """For a ``breadcrumb.*`` event from another process: a definition changed (its old
        ``defines:`` tags are not in the event), so forget every cached definition."""
        if payload.get("schema_name") != SCHEMA_DEFINITION:
            return False
        self.invalidate()
        return True

    # --- internals ------------------------------------------------------------------------

    def _uses_schema_hints(self, record: Record) -> bool:
        if record.get("schema_name") is None:
            return False
        return record.get("llm_hints") is None or is_definition(record)

    def _render_all(
        self, records: Sequence[Record], definitions: Mapping[str, Definition | None]
    ) -> list[Rendered]:
        return [self.render(r, definitions.get(r.get("schema_name") or "")) for r in records]

    def _compiled(self, key: HintsKey | None, raw: Any) -> CompiledHints | str:
        def make() -> CompiledHints | str:
            try:
                return compile_hints(raw, self.engine, max_rules=self.settings.max_rules)
            except HintsError as error:  # stored before a limit changed, or before checks
                return str(error)

        return make() if key is None else self._hints.get_or_make(key, make)


def _hints_of(
    record: Record, definition: Definition | None
) -> tuple[Source, HintsKey | None, Any] | None:
    """Which hints render ``record`` (its own, else its schema's), under which cache key
    (None: not to be cached); None when there are none."""
    if record.get("llm_hints") is not None and not is_definition(record):
        version = record.get("version")  # None: not written yet, not to be cached
        key = None if version is None else ("instance", record["id"], version)
        return "instance", key, record["llm_hints"]
    if definition is not None and definition.hints is not None:
        return "schema", ("schema", definition.id, definition.version), definition.hints
    return None


def _origin(source: Source, definition: Definition | None) -> tuple[uuid.UUID | None, int | None]:
    if source == "schema" and definition is not None:
        return definition.id, definition.version
    return None, None
