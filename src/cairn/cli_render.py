"""How the people commands print answers: one line per event, tables for search hits and
for a context's ``explain`` (why each record is in, why the nearest misses are out)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from cairn_client.models import Coverage, CoverageBreakdown, Event, SearchHit, StageFigures


def console() -> Console:
    # Made per command: the output stream is the one current when the command runs.
    return Console(highlight=False, soft_wrap=False)


def as_json(value: Any) -> str:
    """An answer (a pydantic model, a list of them, or plain data) as indented JSON."""
    if isinstance(value, list):
        return json.dumps([_plain(item) for item in value], indent=2, ensure_ascii=False)
    return json.dumps(_plain(value), indent=2, ensure_ascii=False)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if dump else value


def event_line(event: Event) -> str:
    """``time type schema "title" [tags]`` — one event, one line."""
    when = event.updated_at.strftime("%H:%M:%S") if event.updated_at else "--:--:--"
    tags = ", ".join(event.tags)
    return f'{when}  {event.type}  {event.schema_name or "-"}  "{event.title or ""}"  [{tags}]'


def hits_table(hits: Sequence[SearchHit]) -> Table:
    table = Table("score", "title", "schema", "tags", "id", title=f"{len(hits)} hits")
    for hit in hits:
        tags = ", ".join(hit.tags)
        table.add_row(f"{hit.score:.3f}", hit.title, hit.schema_name or "-", tags, str(hit.id))
    return table


def included_table(explain: Mapping[str, Any]) -> Table:
    """The records in the context: where they came from, what reaching them cost, their
    tokens and the section they are in."""
    table = Table("record", "schema", "source", "cost", "tokens", "section", title="included")
    for item in explain.get("selected", []):
        table.add_row(
            item.get("title") or _short(item.get("record_id")),
            item.get("schema_name") or "-",
            str(item.get("source", "-")),
            _number(item.get("path_cost")),
            str(item.get("tokens", "-")),
            str(item.get("section", "-")),
        )
    return table


def misses_table(explain: Mapping[str, Any], limit: int) -> Table:
    """The candidates left out that came closest (cheapest path first), and why."""
    dropped = list(explain.get("dropped", []))
    dropped.sort(key=lambda item: (item.get("path_cost") is None, item.get("path_cost") or 0))
    shown = dropped[:limit]
    title = f"near misses ({len(shown)} of {len(dropped)})"
    table = Table("record", "reason", "stage", "cost", "tokens", title=title)
    for item in shown:
        table.add_row(
            _short(item.get("record_id")),
            str(item.get("reason", "-")),
            str(item.get("stage", "-")),
            _number(item.get("path_cost")),
            str(item.get("tokens") if item.get("tokens") is not None else "-"),
        )
    return table


def assemblies_table(entries: Sequence[Any]) -> Table:
    """Assembly log entries, newest first: when, for whom, what triggered it, the cost."""
    table = Table("when", "agent", "origin", "trigger", "seeds", "tokens", "ms", "notes")
    table.title = f"{len(entries)} assemblies"
    for entry in entries:
        trigger = entry.query_text or _short(entry.trigger_id)
        seeds = ", ".join(f"{source} {n}" for source, n in entry.seed_counts.items())
        notes = ["cache hit"] * entry.cache_hit + list(entry.degraded)
        table.add_row(
            entry.created_at.strftime("%Y-%m-%d %H:%M:%S"), entry.agent_id, entry.origin,
            trigger[:40], seeds, f"{entry.token_count}/{entry.token_budget}",
            f"{entry.total_ms:.1f}", ", ".join(notes),
        )  # fmt: skip
    return table


def assembly_stats_table(agents: Sequence[Any]) -> Table:
    table = Table("agent", "count", "p50 ms", "p99 ms", "mean tokens", "budget use", "hits")
    for row in agents:
        use = "-" if row.mean_budget_use is None else f"{row.mean_budget_use:.0%}"
        table.add_row(
            row.agent_id, str(row.count), f"{row.p50_ms:.1f}", f"{row.p99_ms:.1f}",
            f"{row.mean_tokens:.0f}", use, str(row.cache_hits),
        )  # fmt: skip
    return table


def _short(record_id: object) -> str:
    return str(record_id)[:8] if record_id else "-"


def _number(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"


def _percent(figure: StageFigures) -> str:
    return f"{figure.percent:.1f}%"


def coverage_tables(coverage: Coverage) -> list[Table]:
    """Stages of every record, then per schema and per session tag prefix (share done),
    then the commonest errors."""
    stages = Table("stage", "done", "%", "pending", "failed", "not needed", "untracked")
    stages.title = f"{coverage.records} records, {coverage.islands.count} without any edge"
    for name, figure in coverage.stages.items():
        stages.add_row(
            name, str(figure.done), _percent(figure), str(figure.pending), str(figure.failed),
            str(figure.not_needed), str(figure.untracked),
        )  # fmt: skip
    tables = [stages]
    for title, parts in (("schema", coverage.by_schema), ("session", coverage.by_session)):
        if parts:
            tables.append(_breakdown_table(title, parts))
    if coverage.errors:
        errors = Table("stage", "records", "error", title="commonest errors")
        for error in coverage.errors:
            errors.add_row(error.stage, str(error.records), error.error)
        tables.append(errors)
    return tables


def _breakdown_table(title: str, parts: Mapping[str, CoverageBreakdown]) -> Table:
    names = list(next(iter(parts.values())).stages)
    table = Table(title, "records", *names, title=f"done by {title}")
    for key, part in parts.items():
        table.add_row(key, str(part.records), *(_percent(part.stages[n]) for n in names))
    return table
