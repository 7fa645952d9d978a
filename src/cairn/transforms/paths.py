"""Dotted field paths: ``include`` / ``exclude`` filters and ``{path}`` lookups.

A path is ``a.b.c``; ``a[0].b`` and ``a.0.b`` pick an array element, ``*`` matches every
key or element, and a name applied to an array applies to each of its elements, so
``items.secret`` drops ``secret`` from every object in ``items``. Filtering copies only
what it changes; untouched subtrees are shared with the input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

FieldPath = tuple[str, ...]

MISSING: Any = object()
_SEGMENT = re.compile(r"[^.\[\]]+|\[(\d+|\*)\]")
_VALID = re.compile(r"[^.\[\]]+(?:\.[^.\[\]]+|\[(?:\d+|\*)\])*")


class PathError(ValueError):
    pass


def parse_path(raw: str) -> FieldPath:
    if not isinstance(raw, str) or not _VALID.fullmatch(raw.strip()):
        raise PathError(f"{raw!r} is not a field path like 'a.b' or 'items[0].name'")
    return tuple(m.group(1) or m.group(0) for m in _SEGMENT.finditer(raw.strip()))


def rooted(paths: Sequence[FieldPath], context: Mapping[str, Any]) -> list[FieldPath]:
    """Paths written from the record (``context.links``) meant from the context, unless the
    context really has a ``context`` field."""
    if "context" in context:
        return list(paths)
    return [p[1:] if p[0] == "context" and len(p) > 1 else p for p in paths]


def exclude(value: Any, paths: Sequence[FieldPath]) -> Any:
    if not paths:
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            rest = _below(paths, key)
            if () in rest:
                continue
            out[key] = exclude(item, rest) if rest else item
        return out
    if isinstance(value, list):
        kept = []
        for index, item in enumerate(value):
            rest = _below_element(paths, index)
            if () not in rest:
                kept.append(exclude(item, rest) if rest else item)
        return kept
    return value


def include(value: Any, paths: Sequence[FieldPath]) -> Any:
    """The parts of ``value`` the paths name; MISSING when they name nothing in it."""
    if () in paths:
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            rest = _below(paths, key)
            kept = include(item, rest) if rest else MISSING
            if kept is not MISSING:
                out[key] = kept
        return out if out else MISSING
    if isinstance(value, list):
        kept_items = [include(item, _below_element(paths, i)) for i, item in enumerate(value)]
        kept_items = [item for item in kept_items if item is not MISSING]
        return kept_items if kept_items else MISSING
    return MISSING


def _below(paths: Sequence[FieldPath], key: str) -> list[FieldPath]:
    return [p[1:] for p in paths if p[0] == key or p[0] == "*"]


def _below_element(paths: Sequence[FieldPath], index: int) -> list[FieldPath]:
    """Paths for one array element: an index or ``*`` is consumed, a name passes through."""
    out = []
    for path in paths:
        head = path[0]
        if head == "*" or head == str(index):
            out.append(path[1:])
        elif not head.isdigit():
            out.append(path)
    return out


def lookup(root: Mapping[str, Any], path: FieldPath) -> Any:
    """The value at ``path`` (``.length`` counts), or MISSING."""
    value: Any = root
    for segment in path:
        if isinstance(value, Mapping) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        elif segment == "length" and isinstance(value, str | list | Mapping):
            value = len(value)
        else:
            return MISSING
    return value
