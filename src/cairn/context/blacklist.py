"""The context blacklist (``context.blacklist.v1``): schemas that never enter any context."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

BLACKLIST_SCHEMA = "context.blacklist.v1"
# Never context, whatever the blacklist says: assembled contexts would feed on themselves.
ALWAYS_EXCLUDED = frozenset({"agent.context.v1"})


def excluded_schemas(context: Mapping[str, Any] | None) -> frozenset[str]:
    """``excluded_schemas`` as strings or ``{schema_name, reason}`` objects."""
    names: set[str] = set(ALWAYS_EXCLUDED)
    for item in (context or {}).get("excluded_schemas") or ():
        if isinstance(item, str):
            names.add(item)
        elif isinstance(item, Mapping) and isinstance(item.get("schema_name"), str):
            names.add(item["schema_name"])
    return frozenset(names)
