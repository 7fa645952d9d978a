"""Idempotency keys of creates: a repeat with the same key and body returns the first answer.

A key belongs to a tenant and to one request body (its canonical JSON's checksum): the same
key with another body is a 409, never a second record. Single and batch creates share the
keys, so a record posted alone can be replayed from a batch and the other way round.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs import repository
from cairn.breadcrumbs.schemas import CreatedResult
from cairn.breadcrumbs.validation import check_text
from cairn.errors import Conflict, InvalidInput

MAX_KEY_LENGTH = 255


def check_key(key: str, name: str = "Idempotency-Key") -> None:
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"{name} must be 1 to {MAX_KEY_LENGTH} characters")
    check_text(key, name)


def conflict(key: str) -> Conflict:
    return Conflict(f"Idempotency-Key '{key}' was used with a different request body")


async def replay(
    session: AsyncSession, owner_id: uuid.UUID, key: str, request_hash: str
) -> CreatedResult | None:
    """The answer first given for ``key`` (None: unused); 409 when its body differed."""
    found = await repository.find_idempotency_key(session, owner_id, key)
    if found is None:
        return None
    if found["request_hash"] != request_hash:
        raise conflict(key)
    return CreatedResult.model_validate(found["response"])
