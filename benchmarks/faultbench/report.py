"""``faults.json`` and the markdown table that docs/operations.md includes."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from .common import Result

REPO = Path(__file__).resolve().parents[2]


def machine() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "commit": commit,
        "src_modified": bool(dirty),
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def markdown(report: dict[str, Any]) -> str:
    run = report["run"]
    lines = [
        f"### Fault suite ({run['mode']}, commit {run['machine']['commit'][:10]},"
        f" {run['machine']['time']})",
        "",
        "| scenario | ops | acked | lost | dup | 5xx | recovery s | result | notes |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for s in report["scenarios"]:
        verdict = "pass" if s["passed"] else ("**error**" if s["error"] else "**FAIL**")
        notes = s["notes"] + (f"; error: {s['error']}" if s["error"] else "")
        lines.append(
            f"| {s['title']} | {s['operations']} | {s['acknowledged']} | {s['lost']}"
            f" | {s['duplicated']} | {s['5xx']} | {_cell(s['recovery_s'])} | {verdict}"
            f" | {notes.replace('|', '/')} |"
        )
    lines += [
        "",
        "lost: acknowledged work that never arrived (a record, its event, its context);"
        " dup: extra deliveries or assemblies of one acknowledged item; 5xx: answers ≥ 500"
        " (503 is expected only while PostgreSQL is down). A scenario fails on lost > 0,"
        " an unexpected 5xx, or an error of the harness.",
    ]
    return "\n".join(lines) + "\n"


def write(results: list[Result], run: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    report = {"run": run, "scenarios": [r.as_json() for r in results]}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "faults.json").write_text(json.dumps(report, indent=2) + "\n")
    (out_dir / "faults.md").write_text(markdown(report))
    return report
