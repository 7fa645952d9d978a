"""Applying compiled hints to one record: filter, run the rules, or fall back."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from jinja2.exceptions import SecurityError

from cairn.config import TransformSettings
from cairn.transforms import paths
from cairn.transforms.budget import Budget, RenderLimitExceeded, activated, approx_size
from cairn.transforms.engine import TemplateEngine
from cairn.transforms.hints import CompiledHints

Source = Literal["instance", "schema", "none"]
MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class Rendered:
    """What an LLM sees of a record, and how it came about."""

    context: dict[str, Any]
    source: Source = "none"
    definition_id: uuid.UUID | None = None
    definition_version: int | None = None
    replaced: bool = False  # the context is the transform's output only (mode replace)
    error: str | None = None  # why the transform fell back to the filtered context
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Applied:
    context: dict[str, Any]
    replaced: bool = False
    error: str | None = None
    elapsed_ms: float = 0.0


def apply_hints(
    engine: TemplateEngine,
    settings: TransformSettings,
    hints: CompiledHints,
    record: Mapping[Any, Any],
) -> Applied:
    """The record's context seen through ``hints``. A rule that fails or exceeds a limit
    falls back to the filtered context, with the reason in ``error``."""
    started = time.perf_counter()
    filtered = filter_context(record.get("context") or {}, hints)
    if not hints.rules:
        return Applied(filtered)
    rule_key = ""
    try:
        with activated(Budget.start(settings)) as budget:
            scope = template_scope(filtered, record)
            outputs: dict[str, Any] = {}
            for rule_key, rule in hints.rules:
                outputs[rule_key] = rule.apply(engine, scope, filtered)
            if approx_size(outputs, budget.max_output_chars) > budget.max_output_chars:
                rule_key = ""
                raise RenderLimitExceeded(
                    f"output longer than {budget.max_output_chars} characters"
                )
    except Exception as error:  # any failure of author-written rules is a fallback, never a 500
        where = f"transform.{rule_key}: " if rule_key else ""
        return Applied(filtered, error=where + describe(error), elapsed_ms=_ms(started))
    replaced = hints.mode == "replace"
    result = outputs if replaced else {**filtered, **outputs}
    return Applied(result, replaced=replaced, elapsed_ms=_ms(started))


def filter_context(context: Mapping[str, Any], hints: CompiledHints) -> dict[str, Any]:
    value: Any = dict(context)
    if hints.include is not None:
        value = paths.include(value, paths.rooted(hints.include, context))
        value = {} if value is paths.MISSING else value
    if hints.exclude:
        value = paths.exclude(value, paths.rooted(hints.exclude, context))
    return dict(value)


def template_scope(filtered: Mapping[str, Any], record: Mapping[Any, Any]) -> dict[str, Any]:
    """Names a template sees: the context's fields, ``context`` and ``breadcrumb``; the
    breadcrumb's own fields stand in for context fields that do not exist, so RCRT's
    ``# {{title}}`` shows the record's title."""
    meta = breadcrumb_meta(record)
    return {**meta, **filtered, "context": filtered, "breadcrumb": meta}


def breadcrumb_meta(record: Mapping[Any, Any]) -> dict[str, Any]:
    created = record.get("created_at")
    return {
        "id": str(record.get("id") or ""),
        "title": record.get("title"),
        "tags": list(record.get("tags") or ()),
        "schema_name": record.get("schema_name"),
        "created_at": created.isoformat() if isinstance(created, datetime) else created,
    }


def describe(error: BaseException) -> str:
    if isinstance(error, RenderLimitExceeded):
        text = f"limit exceeded: {error}"
    elif isinstance(error, SecurityError):
        text = f"not allowed: {error}"
    elif isinstance(error, RecursionError):
        text = "recursion too deep"
    else:
        text = f"{type(error).__name__}: {error}"
    return text[:MAX_ERROR_CHARS]


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
