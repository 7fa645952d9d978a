"""Factories with keyword overrides for request bodies."""

from __future__ import annotations

from typing import Any


def breadcrumb(**overrides: Any) -> dict[str, Any]:
    """A valid create body; keyword overrides replace fields."""
    body: dict[str, Any] = {
        "schema_name": "note.v1",
        "title": "Deploy notes",
        "description": "How the staging deploy went",
        "tags": ["deploy"],
        "context": {"text": "The staging deploy finished after the database migration."},
    }
    body.update(overrides)
    return body


def schema_definition(
    schema_name: str, hints: dict[str, Any] | None, **overrides: Any
) -> dict[str, Any]:
    """A ``schema.def.v1`` body whose ``llm_hints`` apply to records of ``schema_name``."""
    body: dict[str, Any] = {
        "schema_name": "schema.def.v1",
        "title": f"Schema {schema_name}",
        "tags": ["schema:definition", f"defines:{schema_name}"],
        "context": {"schema_name": schema_name},
        "llm_hints": hints,
    }
    body.update(overrides)
    return body
