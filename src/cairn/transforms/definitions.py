"""Schema-level hints: which ``schema.def.v1`` record speaks for a schema, cached.

The newest live ``schema.def.v1`` tagged ``defines:<schema_name>`` gives the hints of every
record of that schema: its top-level ``llm_hints``, else ``context.llm_hints``. Lookups are
cached per (tenant, schema) — a missing definition too — until :meth:`invalidate` or a TTL
(the safety net for definitions changed by another process before its event arrives).

A lookup that started before an invalidation does not store its (possibly stale) answer:
the generation counter moves on every invalidation.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cairn.transforms.cache import LRU

SCHEMA_DEFINITION = "schema.def.v1"
DEFINES_PREFIX = "defines:"
CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Definition:
    id: uuid.UUID
    version: int
    hints: dict[str, Any] | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> Definition:
        hints = row.get("llm_hints")
        if not isinstance(hints, dict):
            nested = row.get("context_hints")
            hints = nested if isinstance(nested, dict) else None
        return cls(row["id"], row["version"], hints)


def defined_schemas(tags: Iterable[str]) -> set[str]:
    """The schema names a definition's ``defines:<name>`` tags speak for."""
    return {tag[len(DEFINES_PREFIX) :] for tag in tags if tag.startswith(DEFINES_PREFIX)}


def is_definition(record: Mapping[Any, Any]) -> bool:
    return record.get("schema_name") == SCHEMA_DEFINITION


Key = tuple[uuid.UUID, str]


class DefinitionCache:
    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: LRU[Key, tuple[float, Definition | None]] = LRU(CACHE_SIZE)
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        return self._generation

    def lookup(
        self, owner_id: uuid.UUID, names: Collection[str]
    ) -> tuple[dict[str, Definition | None], list[str]]:
        """Cached answers, and the names that need a query."""
        now = self.clock()
        found: dict[str, Definition | None] = {}
        missing = []
        for name in names:
            entry = self._entries.get((owner_id, name))
            if entry is None or entry[0] < now:
                missing.append(name)
            else:
                found[name] = entry[1]
        return found, missing

    def store(
        self, owner_id: uuid.UUID, answers: Mapping[str, Definition | None], generation: int
    ) -> None:
        expires = self.clock() + self.ttl_s
        with self._lock:
            if generation != self._generation:
                return  # invalidated while the query ran: the answer may be stale
            for name, definition in answers.items():
                self._entries.put((owner_id, name), (expires, definition))

    def invalidate(self, names: Iterable[str] | None = None) -> None:
        with self._lock:
            self._generation += 1
            if names is None:
                self._entries.clear()
            else:
                gone = set(names)
                self._entries.discard_if(lambda key: key[1] in gone)
