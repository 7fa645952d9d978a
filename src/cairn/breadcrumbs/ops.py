"""Pure functions behind the RCRT tag and merge operations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

APPROVE_REMOVES = frozenset({"draft", "pending"})
APPROVE_ADDS = ("approved", "validated")
REJECT_REMOVES = frozenset({"approved", "validated", "draft"})
REJECT_ADDS = ("rejected",)


def add_tags(current: Sequence[str], new: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*current, *new]))


def remove_tags(current: Sequence[str], gone: Iterable[str]) -> list[str]:
    drop = set(gone)
    return [tag for tag in current if tag not in drop]


def approve_tags(current: Sequence[str]) -> list[str]:
    return add_tags(remove_tags(current, APPROVE_REMOVES), APPROVE_ADDS)


def reject_tags(current: Sequence[str]) -> list[str]:
    return add_tags(remove_tags(current, REJECT_REMOVES), REJECT_ADDS)


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Recursive merge: objects merge key by key, anything else (arrays too) is replaced."""
    merged = dict(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
