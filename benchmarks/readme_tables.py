"""Copy the latest benchmark tables into the README's performance section.

    .venv/bin/python benchmarks/readme_tables.py [NAME ...]   # default: quick scale-100k scale-1m

Replaces what lies between ``<!-- perf-tables:start -->`` and ``<!-- perf-tables:end -->``
with ``benchmarks/results/NAME.md`` for each NAME (headings one level down) and
``by-scale.md``. The prose around the tables (conditions, readings) stays hand-written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
START, END = "<!-- perf-tables:start -->", "<!-- perf-tables:end -->"


def tables(names: list[str]) -> str:
    parts = [re.sub(r"^###", "####", (RESULTS / f"{n}.md").read_text().strip()) for n in names]
    parts.append("#### By scale\n\n" + (RESULTS / "by-scale.md").read_text().strip())
    return "\n\n".join(parts)


def main() -> None:
    names = sys.argv[1:] or ["quick", "scale-100k", "scale-1m"]
    readme = REPO / "README.md"
    text = readme.read_text()
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    readme.write_text(f"{before}{START}\n{tables(names)}\n{END}{after}")
    print(f"README tables from: {', '.join(names)}, by-scale")


if __name__ == "__main__":
    main()
