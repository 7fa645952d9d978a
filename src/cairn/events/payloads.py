"""Subjects and payloads of breadcrumb change events (ARCHITECTURE §4)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

STREAM_NAME = "BREADCRUMBS"
STREAM_SUBJECTS = "bc.>"


class ChangeKind(StrEnum):
    created = "created"
    updated = "updated"
    deleted = "deleted"


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    subject: str
    event_id: uuid.UUID
    owner_id: uuid.UUID
    payload: dict[str, Any]


def subject_for(breadcrumb_id: uuid.UUID, kind: ChangeKind) -> str:
    return f"bc.{breadcrumb_id}.{kind.value}"


def change_event(kind: ChangeKind, row: Mapping[Any, Any], *, change: str) -> ChangeEvent:
    """The event for a committed change of ``row`` (a breadcrumb row as stored)."""
    event_id = uuid.uuid4()
    updated_at: datetime = row["updated_at"]
    payload = {
        "type": f"breadcrumb.{kind.value}",
        "event_id": str(event_id),
        "breadcrumb_id": str(row["id"]),
        "owner_id": str(row["owner_id"]),
        "version": row["version"],
        "schema_name": row["schema_name"],
        "title": row["title"],
        "tags": list(row["tags"]),
        "updated_at": updated_at.isoformat(),
        "context": row["context"],
        "change": change,
    }
    return ChangeEvent(subject_for(row["id"], kind), event_id, row["owner_id"], payload)
