"""Copy the latest benchmark and fault-suite tables into the documentation site.

    .venv/bin/python benchmarks/readme_tables.py [NAME ...]   # default: quick scale-100k scale-1m

In ``docs/performance.md`` it replaces what lies between ``<!-- perf-tables:start -->`` and
``<!-- perf-tables:end -->`` with ``benchmarks/results/NAME.md`` for each NAME and
``by-scale.md``, and between the ``ondemand-table`` markers with ``ondemand.md``; in
``docs/operations.md`` it replaces what lies between the ``faults-table`` markers with
``faults.md``; in ``README.md`` it replaces what lies between the ``by-scale`` markers with
``by-scale.md``. A result file that does not exist leaves its section as it was. The prose
around the tables (conditions, readings) stays hand-written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
DOCS = REPO / "docs"


def _result(name: str) -> str:
    return (RESULTS / f"{name}.md").read_text().strip()


def perf_tables(names: list[str]) -> str:
    """The per-scale tables (their ``###`` headings sit under the page's ``##`` section)."""
    parts = [_result(n) for n in names]
    parts.append("### By scale\n\n" + _result("by-scale"))
    return "\n\n".join(parts)


def ondemand_table() -> str:
    """``ondemand.md`` without its title: the page's section has one."""
    return re.sub(r"^#[^\n]*\n+", "", _result("ondemand"))


def faults_table() -> str:
    """``faults.md`` with its heading turned into the line that dates the run."""
    return re.sub(r"^### Fault suite", "Latest run: fault suite", _result("faults"))


def replace_between(page: Path, marker: str, body: str) -> None:
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    before, rest = page.read_text().split(start, 1)
    _, after = rest.split(end, 1)
    page.write_text(f"{before}{start}\n{body}\n{end}{after}")


def main() -> None:
    names = sys.argv[1:] or ["quick", "scale-100k", "scale-1m"]
    performance, operations = DOCS / "performance.md", DOCS / "operations.md"
    replace_between(performance, "perf-tables", perf_tables(names))
    copied = [*names, "by-scale"]
    if (RESULTS / "ondemand.md").exists():
        replace_between(performance, "ondemand-table", ondemand_table())
        copied.append("ondemand")
    if (RESULTS / "faults.md").exists():
        replace_between(operations, "faults-table", faults_table())
        copied.append("faults")
    replace_between(REPO / "README.md", "by-scale", _result("by-scale"))
    print(f"docs tables from: {', '.join(copied)}")


if __name__ == "__main__":
    main()
