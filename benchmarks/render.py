"""llm_hints rendering: cached compiled templates vs re-parsing on every render.

For typical records (RCRT's own bootstrap data plus a chat message), renders each record
through its hints repeatedly for about SECONDS per case and reports renders per second:

- ``cached``: Cairn's way — the hints and templates compiled once, then rendered (sandbox,
  budget checks, Handlebars translated once);
- ``reparse``: RCRT's way — translate and compile the template(s) again on every render,
  with the same sandbox, so the difference is the compilation alone.

    .venv/bin/python benchmarks/render.py [--seconds 1.0]

Prints a table and writes benchmarks/results/render.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Template

from cairn.config import TransformSettings
from cairn.transforms import Definition, Transforms, compile_hints
from cairn.transforms.engine import Syntax, TemplateEngine
from cairn.transforms.render import apply_hints

REPO = Path(__file__).resolve().parents[1]
RCRT = REPO.parent / "shared" / "fixtures" / "rcrt-bootstrap"
RESULTS = REPO / "benchmarks" / "results" / "render.json"


class ReparsingEngine(TemplateEngine):
    """Compiles on every call, as RCRT's Handlebars ``render_template`` did."""

    def compile(self, source: str, syntax: Syntax = "auto") -> Template:
        return self.parse(source, syntax)


def _fixture(relative: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((RCRT / relative).read_text())
    now = datetime.now(UTC)
    return body | {"id": uuid.uuid4(), "version": 1, "created_at": now}


def _cases() -> list[tuple[str, dict[str, Any], Definition | None]]:
    user_schema = _fixture("schemas-main/user-message-v1.json")
    message = _fixture("schemas-main/user-message-v1.json") | {
        "schema_name": "user.message.v1",
        "llm_hints": None,
        "context": {"content": "Can you summarise the deploy notes?", "timestamp": "12:01"},
    }
    definition = Definition(uuid.uuid4(), 1, user_schema["llm_hints"])
    return [
        ("knowledge, large Handlebars template",
         _fixture("knowledge/astral-browser-automation.json"), None),
        ("knowledge, each/@key/unless template", _fixture("knowledge/tool-validation-rules.json"),
         None),
        ("template with .length and .[0]", _fixture("templates/agent-definition-template.json"),
         None),
        ("template + JSONPath extract", _fixture("templates/llm-hints-guide.json"), None),
        ("chat message, schema format hint", message, definition),
        ("tool, exclude only (no template)", _fixture("tools-self-contained/echo.json"), None),
    ]  # fmt: skip


def _rate(render: Callable[[], Any], seconds: float) -> float:
    render()  # warm caches
    count, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for _ in range(20):
            render()
        count += 20
    return count / elapsed


def _measure(seconds: float) -> list[dict[str, Any]]:
    settings = TransformSettings()
    transforms = Transforms(settings)
    reparsing = ReparsingEngine(settings)
    rows = []
    for name, record, definition in _cases():
        instance = record["llm_hints"]
        raw = instance if instance is not None else definition.hints if definition else None
        view = transforms.render(record, definition)
        assert view.error is None, (name, view.error)

        def cached(record: dict[str, Any] = record, definition: Any = definition) -> Any:
            return transforms.render(record, definition)

        def reparse(record: dict[str, Any] = record, raw: Any = raw) -> Any:
            hints = compile_hints(raw, reparsing, max_rules=settings.max_rules)
            return apply_hints(reparsing, settings, hints, record)

        fast, slow = _rate(cached, seconds), _rate(reparse, seconds)
        rows.append({
            "case": name,
            "context_bytes": len(json.dumps(record["context"])),
            "cached_renders_per_s": round(fast),
            "reparse_renders_per_s": round(slow),
            "speedup": round(fast / slow, 1),
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per case and way")
    args = parser.parse_args()
    rows = _measure(args.seconds)
    print(f"{'case':40} {'context':>8} {'cached/s':>10} {'reparse/s':>10} {'speedup':>8}")
    for row in rows:
        print(
            f"{row['case']:40} {row['context_bytes']:>8} {row['cached_renders_per_s']:>10}"
            f" {row['reparse_renders_per_s']:>10} {row['speedup']:>7}x"
        )
    report = {
        "seconds_per_case": args.seconds,
        "results": rows,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
