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
