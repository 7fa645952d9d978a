"""The ``llm_hints`` model: parsed and compiled once, applied many times.

``{include?, exclude?, transform?: {out_key: rule}, mode?: "replace" | "merge"}`` with
rules ``{"type": "template", "template"}``, ``{"type": "extract", "value": JSONPath}``,
``{"type": "format", "format": "… {path} …"}`` and ``{"type": "literal", "literal"}``.

Unknown keys (RCRT's schema definitions carry ``summary``, ``when_to_use``, ``comment`` …)
and an unknown ``mode`` are warnings, never a rejection of the whole object. A rule that
cannot work — an unknown type, a template or JSONPath that does not compile — is a
:class:`HintsError`, which a write turns into a 422 naming the rule.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from jinja2 import Template

from cairn.transforms.engine import SYNTAXES, TemplateEngine, TemplateError
from cairn.transforms.extract import ExtractError, Extractor
from cairn.transforms.paths import MISSING, FieldPath, PathError, lookup, parse_path
from cairn.transforms.sandbox import as_text

log = logging.getLogger(__name__)

Mode = Literal["replace", "merge"]
HINT_KEYS = frozenset({"include", "exclude", "transform", "mode"})
MAX_PATHS = 256
_PLACEHOLDER = re.compile(r"\{([^{}\s]+)\}")


class HintsError(ValueError):
    """Hints that cannot be applied; the message names the field and the reason."""


class Rule(Protocol):
    def apply(self, engine: TemplateEngine, scope: Mapping[str, Any], data: Any) -> Any: ...


@dataclass(frozen=True)
class TemplateRule:
    template: Template

    def apply(self, engine: TemplateEngine, scope: Mapping[str, Any], data: Any) -> Any:
        return engine.render(self.template, scope)


@dataclass(frozen=True)
class ExtractRule:
    extractor: Extractor

    def apply(self, engine: TemplateEngine, scope: Mapping[str, Any], data: Any) -> Any:
        return self.extractor(data)


@dataclass(frozen=True)
class FormatRule:
    parts: tuple[str | FieldPath, ...]  # text, and paths to fill in

    def apply(self, engine: TemplateEngine, scope: Mapping[str, Any], data: Any) -> Any:
        out = []
        for part in self.parts:
            out.append(part if isinstance(part, str) else as_text(_found(lookup(scope, part))))
        return "".join(out)


@dataclass(frozen=True)
class LiteralRule:
    value: Any

    def apply(self, engine: TemplateEngine, scope: Mapping[str, Any], data: Any) -> Any:
        return self.value


@dataclass(frozen=True)
class CompiledHints:
    include: tuple[FieldPath, ...] | None = None
    exclude: tuple[FieldPath, ...] = ()
    rules: tuple[tuple[str, Rule], ...] = ()
    mode: Mode = "replace"
    warnings: tuple[str, ...] = field(default=(), compare=False)


def compile_hints(raw: Any, engine: TemplateEngine, *, max_rules: int) -> CompiledHints:
    if not isinstance(raw, Mapping):
        raise HintsError("llm_hints must be an object")
    warnings = [f"unknown key '{key}' ignored" for key in raw if key not in HINT_KEYS]
    mode: Mode = "merge" if raw.get("mode") == "merge" else "replace"
    if raw.get("mode") not in (None, "replace", "merge"):
        warnings.append(f"mode {raw['mode']!r} is not 'replace' or 'merge'; using 'replace'")
    include = _paths(raw.get("include"), "include")
    hints = CompiledHints(
        include=include if raw.get("include") is not None else None,
        exclude=_paths(raw.get("exclude"), "exclude"),
        rules=_rules(raw.get("transform"), engine, max_rules, warnings),
        mode=mode,
        warnings=tuple(warnings),
    )
    for warning in warnings:
        log.info("llm_hints: %s", warning)
    return hints


def _paths(raw: Any, name: str) -> tuple[FieldPath, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_PATHS:
        raise HintsError(f"{name}: a list of at most {MAX_PATHS} field paths")
    try:
        return tuple(parse_path(item) for item in raw)
    except PathError as error:
        raise HintsError(f"{name}: {error}") from None


def _rules(
    raw: Any, engine: TemplateEngine, max_rules: int, warnings: list[str]
) -> tuple[tuple[str, Rule], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise HintsError("transform: an object of output field → rule")
    if len(raw) > max_rules:
        raise HintsError(f"transform: at most {max_rules} rules")
    return tuple(
        (str(key), _rule(f"transform.{key}", rule, engine, warnings)) for key, rule in raw.items()
    )


_RULE_FIELDS = {
    "template": "template",
    "extract": "value",
    "format": "format",
    "literal": "literal",
}


def _rule(where: str, raw: Any, engine: TemplateEngine, warnings: list[str]) -> Rule:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("type"), str):
        raise HintsError(f'{where}: a rule is an object with a "type"')
    kind = raw["type"]
    if kind not in _RULE_FIELDS:
        raise HintsError(f"{where}: unknown type {kind!r}; use one of {', '.join(_RULE_FIELDS)}")
    needed = _RULE_FIELDS[kind]
    if needed not in raw:
        raise HintsError(f"{where}: a {kind} rule needs {needed!r}")
    extra = set(raw) - {"type", needed, "syntax"}
    warnings.extend(f"{where}: unknown key '{key}' ignored" for key in sorted(extra))
    value = raw[needed]
    if kind == "literal":
        return LiteralRule(value)
    if not isinstance(value, str):
        raise HintsError(f"{where}: {needed!r} must be a string")
    try:
        if kind == "template":
            return TemplateRule(engine.compile(value, _syntax(where, raw.get("syntax"))))
        if kind == "extract":
            return ExtractRule(Extractor(value))
        return FormatRule(_format_parts(value))
    except (TemplateError, ExtractError) as error:
        raise HintsError(f"{where}: {error}") from None


def _syntax(where: str, raw: Any) -> Any:
    if raw is None:
        return "auto"
    if raw not in SYNTAXES:
        raise HintsError(f"{where}: syntax must be one of {', '.join(SYNTAXES)}")
    return raw


def _format_parts(text: str) -> tuple[str | FieldPath, ...]:
    """``{path}`` placeholders become lookups; any other braces stay literal text."""
    parts: list[str | FieldPath] = []
    pos = 0
    for match in _PLACEHOLDER.finditer(text):
        try:
            path = parse_path(match.group(1))
        except PathError:
            continue
        parts.extend([text[pos : match.start()], path])
        pos = match.end()
    parts.append(text[pos:])
    return tuple(part for part in parts if part != "")


def _found(value: Any) -> Any:
    return None if value is MISSING else value
