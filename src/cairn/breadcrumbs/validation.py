"""Input limits and JSON sanity checks applied before anything is written.

PostgreSQL rejects NUL characters and lone surrogates in text and jsonb, and non-finite
numbers in jsonb; a deep document can exhaust its parser's stack. All of these are caught
here as 4xx instead of surfacing as database errors.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

from cairn.api.input import text_problem
from cairn.config import Limits
from cairn.errors import InvalidInput, PayloadTooLarge

MAX_JSON_DEPTH = 64


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace: the bytes the checksum and the size are taken over."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def checksum(payload: bytes) -> str:
    return "sha256:" + hashlib.sha256(payload).hexdigest()


def check_json(value: Any, field: str, *, depth: int = 0) -> None:
    """Reject NUL characters, non-finite numbers and excessive nesting, naming the path."""
    if depth > MAX_JSON_DEPTH:
        raise InvalidInput(f"{field}: nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        check_text(value, field)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{field}: numbers must be finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, f"{field}.{key!s:.40}")
            check_json(item, f"{field}.{key!s:.40}", depth=depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json(item, f"{field}[{index}]", depth=depth + 1)


def check_text(value: str, field: str) -> None:
    if problem := text_problem(value):
        raise InvalidInput(f"{field}: {problem}")


def check_title(title: str, limits: Limits) -> None:
    check_text(title, "title")
    if len(title) > limits.max_title_length:
        raise InvalidInput(f"title: longer than {limits.max_title_length} characters")


def check_description(description: str | None, limits: Limits) -> None:
    if description is None:
        return
    check_text(description, "description")
    if len(description) > limits.max_description_length:
        raise InvalidInput(f"description: longer than {limits.max_description_length} characters")


def check_tags(tags: Iterable[str], limits: Limits) -> list[str]:
    """Validate and de-duplicate tags, keeping their order."""
    unique = list(dict.fromkeys(tags))
    if len(unique) > limits.max_tags:
        raise InvalidInput(f"tags: more than {limits.max_tags} tags")
    for tag in unique:
        check_text(tag, "tags")
        if not tag.strip():
            raise InvalidInput("tags: a tag may not be empty")
        if len(tag) > limits.max_tag_length:
            raise InvalidInput(f"tags: '{tag[:40]}…' is longer than {limits.max_tag_length}")
    return unique


def check_context(context: dict[str, Any], limits: Limits) -> bytes:
    """Validate a context document and return its canonical bytes."""
    check_json(context, "context")
    payload = canonical_json(context)
    if len(payload) > limits.max_context_bytes:
        raise PayloadTooLarge(
            f"context: {len(payload)} bytes, the limit is {limits.max_context_bytes}"
        )
    return payload


def check_hints(hints: dict[str, Any] | None, limits: Limits) -> None:
    if hints is None:
        return
    check_json(hints, "llm_hints")
    if len(canonical_json(hints)) > limits.max_context_bytes:
        raise PayloadTooLarge(f"llm_hints: larger than {limits.max_context_bytes} bytes")
