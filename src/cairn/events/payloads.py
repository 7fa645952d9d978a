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


# Every event the relay publishes names its tenant and the record's schema in headers too,
# so that a consumer needing no more than those (the caches' listeners, the webhooks of a
# tenant without any, the worker for an assembled context) reads them without parsing a
# body that may hold a ~60 KB context. The owner's header marks such a message; the
# schema's is absent for a record without one. A message without them is parsed.
OWNER_HEADER = "Cairn-Owner"
SCHEMA_HEADER = "Cairn-Schema"


def event_headers(owner_id: str, schema_name: str | None) -> dict[str, str]:
    """The headers the relay publishes an event with (schema names are header-safe:
    ``SCHEMA_NAME_PATTERN``)."""
    headers = {OWNER_HEADER: owner_id}
    if schema_name is not None:
        headers[SCHEMA_HEADER] = schema_name
    return headers


def event_summary(headers: Mapping[str, str] | None) -> dict[str, Any] | None:
    """An event's ``owner_id`` and ``schema_name`` from its headers, as its payload has
    them; None when the message does not carry them (its body must be parsed)."""
    if not headers or OWNER_HEADER not in headers:
        return None
    return {"owner_id": headers[OWNER_HEADER], "schema_name": headers.get(SCHEMA_HEADER)}


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
