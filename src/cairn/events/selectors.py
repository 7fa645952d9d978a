"""Which events a subscriber wants: RCRT's selector (tags, schema, simple context matches)
plus Cairn's ``session`` shorthand. Shared by SSE and webhooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Op = Literal["eq", "ne", "contains", "contains_any", "gt", "gte", "lt", "lte", "exists"]
_MISSING = object()


class ContextMatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="a JSON path into the context, such as $.status or $.a.b")
    op: Op = "eq"
    value: Any = None

    def matches(self, context: Any) -> bool:
        found = _lookup(context, self.path)
        if self.op == "exists":
            return (found is not _MISSING) == (self.value is not False)
        if found is _MISSING:
            return False
        return _compare(found, self.op, self.value)


class Selector(BaseModel):
    """RCRT's keys (``any_tags``, ``all_tags``, ``schema_name``, ``context_match``) and
    ``session``. Any other key is refused: a misspelt or unsupported condition (RCRT's SDK
    declares ``owner_id``, ``visibility_in``, ``sensitivity_in``, which RCRT's server never
    applied) silently dropped would leave a filter that matches everything."""

    model_config = ConfigDict(extra="forbid")

    schema_name: str | None = None
    any_tags: list[str] | None = None
    all_tags: list[str] | None = None
    session: str | None = None
    context_match: list[ContextMatch] | None = Field(default=None, max_length=32)

    def matches(self, event: Mapping[str, Any]) -> bool:
        tags = set(event.get("tags") or ())
        if self.schema_name is not None and event.get("schema_name") != self.schema_name:
            return False
        if self.any_tags and not tags.intersection(self.any_tags):
            return False
        if self.all_tags and not tags.issuperset(self.all_tags):
            return False
        if self.session is not None and f"session:{self.session}" not in tags:
            return False
        context = event.get("context")
        return all(match.matches(context) for match in self.context_match or ())

    def merged(self, other: Selector) -> Selector:
        """Both selectors' conditions (query parameters and a ``filters`` document)."""
        fields = {name: value for name, value in other if value is not None}
        return self.model_copy(update=fields) if fields else self


def _lookup(document: Any, path: str) -> Any:
    node = document
    for part in path.removeprefix("$").strip(".").split("."):
        if not part:
            continue
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _compare(found: Any, op: Op, value: Any) -> bool:
    if op == "eq":
        return bool(found == value)
    if op == "ne":
        return bool(found != value)
    if op == "contains":
        return isinstance(found, list | str) and value in found
    if op == "contains_any":
        wanted = value if isinstance(value, list) else [value]
        return isinstance(found, list) and any(item in found for item in wanted)
    try:
        if op == "gt":
            return bool(found > value)
        if op == "gte":
            return bool(found >= value)
        if op == "lt":
            return bool(found < value)
        return bool(found <= value)
    except TypeError:  # incomparable types never match
        return False
