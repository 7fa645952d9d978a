"""Records and hints for transform tests (plain data, no database)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from cairn.config import TransformSettings
from cairn.transforms import Rendered, Transforms

FIXED_ID = uuid.UUID("00000000-0000-0000-0000-0000000000aa")
FIXED_TIME = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def record(**overrides: Any) -> dict[str, Any]:
    """A breadcrumb row as the store returns it; keyword overrides replace fields."""
    row: dict[str, Any] = {
        "id": FIXED_ID,
        "version": 1,
        "title": "Deploy notes",
        "tags": ["deploy"],
        "schema_name": "note.v1",
        "created_at": FIXED_TIME,
        "context": {"text": "The staging deploy finished.", "author": "ana"},
        "llm_hints": None,
    }
    row.update(overrides)
    return row


def rule(kind: str, value: Any, **extra: Any) -> dict[str, Any]:
    field = {"template": "template", "extract": "value", "format": "format"}.get(kind, kind)
    return {"type": kind, field: value, **extra}


def render(context: dict[str, Any], hints: dict[str, Any], **settings: Any) -> Rendered:
    transforms = Transforms(TransformSettings(**settings))
    return transforms.render(record(context=context, llm_hints=hints), None)


def render_template(
    template: str, context: dict[str, Any] | None = None, **settings: Any
) -> Rendered:
    hints = {"transform": {"out": rule("template", template)}}
    return render(context if context is not None else {}, hints, **settings)
