"""Records, seeds and graphs for context-builder tests: plain data, fixed ids and times."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from cairn.context import Edge, EdgeType, Graph, Record

OWNER = uuid.UUID("00000000-0000-0000-0000-00000000000f")
EPOCH = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def rid(n: int) -> uuid.UUID:
    """A fixed, readable id: rid(7) is ...0007."""
    return uuid.UUID(int=n)


def record(n: int, **overrides: Any) -> Record:
    """Record number ``n``, created ``n`` minutes after EPOCH; keyword overrides replace fields."""
    fields: dict[str, Any] = {
        "id": rid(n),
        "owner_id": OWNER,
        "schema_name": "note.v1",
        "title": f"Note {n}",
        "tags": (),
        "context": {"text": f"note number {n}"},
        "llm_hints": None,
        "created_at": EPOCH + timedelta(minutes=n),
        "updated_at": EPOCH + timedelta(minutes=n),
    }
    fields.update(overrides)
    return Record(**fields)


def graph(
    records: Iterable[Record], edges: Iterable[tuple[int, int, EdgeType, float]] = ()
) -> Graph:
    return Graph(
        {r.id: r for r in records},
        tuple(Edge(rid(a), rid(b), kind, weight) for a, b, kind, weight in edges),
    )


def render_plain(item: Record) -> str:
    """A stand-in for the transforms engine: the context as compact JSON."""
    return json.dumps(item.context, ensure_ascii=False, sort_keys=True)
