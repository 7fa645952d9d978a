"""Seed 003's "Context Debug" block, rendered as Markdown from a stored assembly's
``explain``: what the trigger said (signals), what the knowledge query matched, which
dependencies' handoffs came in, what was filtered out and why, and how each section spent
its allocation.

A pure function of the stored record, so it reads any assembly ever written: parts an older
``explain`` lacks (signals, sections) say so instead of failing, and a value of the wrong
shape reads as absent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

NONE = "none"
# Seed 003's knowledge kinds, by schema family (``pattern.v1``, ``pattern.v2`` …).
KINDS = (
    ("Patterns", "pattern."),
    ("Gotchas", "gotcha."),
    ("Decisions", "decision."),
    ("Code references", "code.reference."),
)
HANDOFF_SCHEMAS = ("task.handoff.",)
STAGES = ("seeds", "graph", "select", "render")


def render_debug(context: Mapping[str, Any]) -> str:
    """The Markdown debug view of one ``agent.context.v1`` context."""
    explain = _mapping(context.get("explain"))
    parts = [
        _heading(context),
        _signals(_mapping(explain.get("signals"))),
        _knowledge(explain),
        _dependencies(_items(explain.get("selected"))),
        _filtering(explain),
        _sections(explain.get("sections")),
    ]
    return "\n\n".join(parts) + "\n"


def _heading(context: Mapping[str, Any]) -> str:
    facts = [
        f"- Agent: `{_inline(context.get('consumer_id'))}`",
        f"- Trigger: `{_inline(context.get('trigger_id'))}`",
        f"- Assembled at: {_inline(context.get('assembled_at'))}",
        f"- Tokens: {_inline(context.get('token_count'))}"
        f" of {_inline(context.get('token_budget'))}",
    ]
    return "## Context Debug\n\n" + "\n".join(facts)


def _signals(signals: Mapping[str, Any]) -> str:
    if not signals:
        return "### Signals Extracted\n\nnone (this assembly's explain records no signals)"
    domain = _mapping(signals.get("domain"))
    complexity = _mapping(signals.get("complexity"))
    timely = _mapping(signals.get("time_sensitive"))
    lines = [
        f"- Keywords: {_listed(signals.get('keywords'))}",
        f"- Domains: {_domain(domain)}",
        f"- Files Mentioned: {_listed(signals.get('files'))}",
        f"- Modules: {_listed(signals.get('modules'))}",
        f"- Complexity: {_inline(complexity.get('tier'))}{_evidence(complexity)}",
        f"- Time sensitive: {_yes_no(timely.get('value'))}{_evidence(timely)}",
    ]
    return "### Signals Extracted\n\n" + "\n".join(lines)


def _domain(domain: Mapping[str, Any]) -> str:
    name = domain.get("name")
    if not isinstance(name, str) or not name:
        return NONE
    confidence = domain.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        return f"{_inline(name)} (confidence {confidence:.2f})"
    return _inline(name)


def _knowledge(explain: Mapping[str, Any]) -> str:
    selected = _items(explain.get("selected"))
    considered = {
        str(item.get("record_id"))
        for key in ("seeds", "selected", "dropped")
        for item in _items(explain.get(key))
    }
    schemas = Counter(str(item.get("schema_name") or "record") for item in selected)
    lines = [f"- Nodes matched: {len(considered)}"]
    for label, prefix in KINDS:
        lines.append(f"- {label} found: {_count(schemas, (prefix,))}")
    seeds = Counter(str(item.get("source")) for item in _items(explain.get("seeds")))
    lines.append(f"- Seeds by source: {_counts(seeds)}")
    lines.append(f"- Selected by schema: {_counts(schemas)}")
    return "### Knowledge Graph Query\n\n" + "\n".join(lines)


def _dependencies(selected: list[Mapping[str, Any]]) -> str:
    handoffs = [
        item for item in selected if str(item.get("schema_name") or "").startswith(HANDOFF_SCHEMAS)
    ]
    tasks = [
        f"{_inline(item.get('title'))} (`{_inline(item.get('record_id'))}`)" for item in handoffs
    ]
    lines = [f"- Handoffs included: {len(handoffs)}", f"- Task IDs: {_joined(tasks)}"]
    return "### Dependencies Processed\n\n" + "\n".join(lines)


def _filtering(explain: Mapping[str, Any]) -> str:
    dropped = _items(explain.get("dropped"))
    selected = _items(explain.get("selected"))
    lines = [f"- Selected: {len(selected)}", f"- Dropped: {len(dropped)}"]
    stages = [*STAGES, *sorted({str(d.get("stage")) for d in dropped} - set(STAGES))]
    for stage in stages:
        reasons = Counter(str(d.get("reason")) for d in dropped if str(d.get("stage")) == stage)
        if reasons:
            lines.append(f"  - at {_inline(stage)}: {_counts(reasons)}")
    return "### Filtering\n\n" + "\n".join(lines)


def _sections(raw: Any) -> str:
    sections = _items(raw)
    if not sections:
        return "### Sections\n\nnone (this assembly used no sections)"
    rows = [
        "| Section | Allocated | Used | Items | Max items | Empty |",
        "|---------|-----------|------|-------|-----------|-------|",
    ]
    for section in sections:
        title = section.get("title") or section.get("name")
        cells = [_cell(title), *(_cell(section.get(k)) for k in ("allocated", "used", "items"))]
        cells += [_cell(section.get("max_items")), _yes_no(section.get("empty"))]
        rows.append("| " + " | ".join(cells) + " |")
    return "### Sections\n\n" + "\n".join(rows)


# --- formatting ---------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _inline(value: Any) -> str:
    """A value on one line, without the backticks that would end a code span."""
    if value is None or value == "":
        return NONE
    return " ".join(str(value).split()).replace("`", "'")


def _cell(value: Any) -> str:
    return "-" if value is None else _inline(value).replace("|", "\\|")


def _listed(value: Any) -> str:
    return _joined(_inline(item) for item in value) if isinstance(value, list) else NONE


def _joined(values: Iterable[str]) -> str:
    return ", ".join(values) or NONE


def _count(counts: Counter[str], prefixes: tuple[str, ...]) -> int:
    return sum(n for schema, n in counts.items() if schema.startswith(prefixes))


def _counts(counts: Counter[str]) -> str:
    return _joined(f"{_inline(key)} {n}" for key, n in sorted(counts.items()))


def _yes_no(value: Any) -> str:
    return NONE if value is None else ("yes" if value else "no")


def _evidence(signal: Mapping[str, Any]) -> str:
    evidence = signal.get("evidence")
    if isinstance(evidence, list) and evidence:
        return f" ({_listed(evidence)})"
    if isinstance(evidence, str) and evidence:
        return f" ({_inline(evidence)})"
    return ""
