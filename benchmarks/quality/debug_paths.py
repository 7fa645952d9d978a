"""Debug paths: how well the deterministic rules find, follow and close a session's debug
path, against hand-annotated scripted sessions (no server: the pure core only).

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths.py

Each session of ``debug_paths/sessions.json`` (written by ``debug_paths_corpus.py``, the
expectations by hand) is fed record by record through ``signals.classify`` and
``machine.advance`` on a simulated clock (``gap`` minutes between steps, ``quiet`` after
the last), with ``machine.sweep`` run before each step and at the end, and
``summary.summarise`` on each resolution. With ``--prior``, also whether the prior fix is
in the context when the same error recurs in a new session, against a real PostgreSQL
through the worker's handlers (``debug_paths_prior.py``). Reported: path detection
precision/recall per session, the end of each expected path (resolved / abandoned /
active), waypoint-type accuracy per step with a confusion table, signature grouping over
pairs of error steps, whether the resolution summary names the fix, and every miss. Reports go to
benchmarks/results/debug_paths.{json,md}.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from server import source_state, write_report  # noqa: E402

from cairn.paths.machine import PathState, Status, advance, sweep  # noqa: E402
from cairn.paths.signals import classify  # noqa: E402
from cairn.paths.summary import WaypointNote, summarise  # noqa: E402

CORPUS = HERE / "debug_paths" / "sessions.json"
RECURRENCES = HERE / "debug_paths" / "recurrences.json"
UNRELATED = HERE / "debug_paths" / "unrelated.json"
RESULTS = HERE.parents[0] / "results" / "debug_paths"
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
IDLE_AFTER = timedelta(minutes=30)
DEFAULT_QUIET = 5
TARGET = 0.9


@dataclass
class Path_:
    """One path the rules opened in a session."""

    signature: str | None
    end: str = "active"
    notes: list[WaypointNote] = field(default_factory=list)
    fix: str | None = None


@dataclass
class Outcome:
    paths: list[Path_]
    steps: list[dict[str, Any]]


def replay(session: dict[str, Any]) -> Outcome:
    """The session as the rules see it: the paths opened and what each step recorded."""
    state, now = PathState(), T0
    paths: list[Path_] = []
    steps: list[dict[str, Any]] = []

    def close_idle(at: datetime) -> None:
        nonlocal state
        swept = sweep(state, at, IDLE_AFTER)
        if swept.state.status is Status.ABANDONED and state.status is Status.ACTIVE:
            paths[-1].end = "abandoned"
        state = swept.state

    for index, step in enumerate(session["steps"]):
        now += timedelta(minutes=step.get("gap", 1))
        close_idle(now)
        signal = classify(step["record"])
        moved = advance(state, signal, now)
        if moved.started:
            paths.append(Path_(signal.signature))
        if moved.waypoints:
            summary = str(step["record"].get("title") or signal.evidence)
            for kind in moved.waypoints:
                note = WaypointNote(kind, summary, signal.command, signal.files)
                paths[-1].notes.append(note)
        if moved.resolved:
            paths[-1].end = "resolved"
            paths[-1].fix = summarise(paths[-1].notes).what_fixed_it
        state = moved.state
        steps.append(
            {
                "index": index,
                "kind": signal.kind.value,
                "signature": signal.signature,
                "got": [w.value for w in moved.waypoints],
            }
        )
    close_idle(now + timedelta(minutes=session.get("quiet", DEFAULT_QUIET)))
    return Outcome(paths, steps)


def label(waypoints: list[str]) -> str:
    return "+".join(waypoints) or "none"


def measure(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    ends = {"right": 0, "total": 0}
    fixes = {"right": 0, "total": 0}
    confusion: Counter[tuple[str, str]] = Counter()
    step_right = step_total = 0
    errors: list[tuple[str, str, str | None]] = []  # (session, group, signature)
    misses: list[dict[str, Any]] = []

    def miss(sid: str, step: int | None, what: str, record: Any = None) -> None:
        entry: dict[str, Any] = {"session": sid, "step": step, "what": what}
        if record is not None:
            entry["record"] = record
        misses.append(entry)

    for session in sessions:
        sid, expected = session["id"], session["paths"]
        outcome = replay(session)
        got = bool(outcome.paths)
        if expected and got:
            tp += 1
        elif got:
            fp += 1
            miss(sid, None, f"a path opened, none expected ({len(outcome.paths)})")
        elif expected:
            fn += 1
            miss(sid, None, "no path opened, one expected")
        else:
            tn += 1
        for n, want in enumerate(expected):
            ends["total"] += 1
            have = outcome.paths[n] if n < len(outcome.paths) else None
            end = have.end if have else "missing"
            if end == want["end"]:
                ends["right"] += 1
            else:
                miss(sid, None, f"path {n + 1}: expected {want['end']}, got {end}")
            if want["end"] == "resolved" and "fix" in want:
                fixes["total"] += 1
                fix = have.fix if have and have.fix else ""
                if want["fix"].lower() in fix.lower():
                    fixes["right"] += 1
                else:
                    miss(sid, None, f"fix should name {want['fix']!r}, got {fix!r}")
        for step, result in zip(session["steps"], outcome.steps, strict=True):
            want_label, got_label = label(step["expect"]), label(result["got"])
            confusion[(want_label, got_label)] += 1
            step_total += 1
            if want_label == got_label:
                step_right += 1
            else:
                miss(
                    sid,
                    result["index"],
                    f"expected {want_label}, got {got_label} (signal {result['kind']})",
                    step["record"],
                )
            if "group" in step:
                errors.append((f"{sid}#{result['index']}", step["group"], result["signature"]))

    same = {"right": 0, "total": 0}
    different = {"right": 0, "total": 0}
    for (a, group_a, sig_a), (b, group_b, sig_b) in itertools.combinations(errors, 2):
        bucket = same if group_a == group_b else different
        bucket["total"] += 1
        matched = sig_a is not None and sig_a == sig_b
        if matched == (group_a == group_b):
            bucket["right"] += 1
        elif group_a == group_b:
            miss(f"{a} / {b}", None, f"same error {group_a}, signatures {sig_a!r} / {sig_b!r}")
        else:
            miss(f"{a} / {b}", None, f"{group_a} and {group_b} share signature {sig_a!r}")

    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    signatures = {
        group: sorted({s or "None" for _, g, s in errors if g == group})
        for group in sorted({g for _, g, _ in errors})
    }
    return {
        "commit": source_state(),
        "sessions": len(sessions),
        "steps": step_total,
        "detection": {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "tn": tn,
            "precision": round(precision, 3),
            "recall": round(recall, 3),
        },
        "resolution": {**ends, "accuracy": _ratio(ends)},
        "waypoints": {
            "right": step_right,
            "total": step_total,
            "accuracy": round(step_right / step_total, 3),
        },
        "grouping": {
            "same_group_pairs": {**same, "accuracy": _ratio(same)},
            "different_group_pairs": {**different, "accuracy": _ratio(different)},
            "signatures": signatures,
        },
        "fix_named": {**fixes, "accuracy": _ratio(fixes)},
        "confusion": [
            {"expected": w, "got": g, "count": c} for (w, g), c in sorted(confusion.items())
        ],
        "misses": misses,
        "settings": {
            "idle_after_minutes": IDLE_AFTER.total_seconds() / 60,
            "threshold": "machine.RESOLUTION_THRESHOLD",
        },
    }


def _ratio(counts: dict[str, int]) -> float:
    return round(counts["right"] / counts["total"], 3) if counts["total"] else 1.0


def table(report: dict[str, Any]) -> str:
    d, g = report["detection"], report["grouping"]
    rows = [
        ("path detection precision (sessions)", d["precision"], f"{d['tp']} / {d['tp'] + d['fp']}"),
        ("path detection recall (sessions)", d["recall"], f"{d['tp']} / {d['tp'] + d['fn']}"),
        (
            "path end (resolved/abandoned/active)",
            report["resolution"]["accuracy"],
            f"{report['resolution']['right']} / {report['resolution']['total']}",
        ),
        (
            "waypoint type (steps)",
            report["waypoints"]["accuracy"],
            f"{report['waypoints']['right']} / {report['waypoints']['total']}",
        ),
        (
            "signature: same error, same signature (pairs)",
            g["same_group_pairs"]["accuracy"],
            f"{g['same_group_pairs']['right']} / {g['same_group_pairs']['total']}",
        ),
        (
            "signature: different errors kept apart (pairs)",
            g["different_group_pairs"]["accuracy"],
            f"{g['different_group_pairs']['right']} / {g['different_group_pairs']['total']}",
        ),
        (
            "resolution summary names the fix",
            report["fix_named"]["accuracy"],
            f"{report['fix_named']['right']} / {report['fix_named']['total']}",
        ),
    ]
    labels = sorted(
        {c["expected"] for c in report["confusion"]} | {c["got"] for c in report["confusion"]}
    )
    cells = {(c["expected"], c["got"]): c["count"] for c in report["confusion"]}
    lines = [
        "# Debug paths: deterministic detection against hand-annotated sessions",
        "",
        f"Commit {report['commit']}; {report['sessions']} sessions, {report['steps']} steps;"
        f" abandoned after {report['settings']['idle_after_minutes']:.0f} quiet minutes."
        f" Target ≥ {TARGET:.0%} each.",
        "",
        "| measure | score | counts | target met |",
        "|---|---|---|---|",
        *(
            f"| {name} | {score:.3f} | {counts} | {'yes' if score >= TARGET else 'NO'} |"
            for name, score, counts in rows
        ),
        "",
        "## Waypoint confusion (rows: expected, columns: got)",
        "",
        "| expected \\ got | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
        *(
            f"| {w} | " + " | ".join(str(cells.get((w, g), "")) for g in labels) + " |"
            for w in labels
        ),
        "",
        f"## Misses ({len(report['misses'])})",
        "",
        "| session | step | what | record |",
        "|---|---|---|---|",
        *(
            f"| {m['session']} | {'' if m['step'] is None else m['step']} | {_cell(m['what'])} |"
            f" {_cell(_brief(m.get('record')))} |"
            for m in report["misses"]
        ),
        "",
    ]
    return "\n".join(lines)


def _brief(record: Any) -> str:
    if record is None:
        return ""
    context = record.get("context", {})
    keys = ("command", "tool", "exit_code", "status_code")
    shown = {k: context[k] for k in keys if k in context}
    return f"{record.get('schema_name')} {record.get('title')!r} {json.dumps(shown)}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:200]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--recurrences", type=Path, default=RECURRENCES)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--prior", action="store_true", help="also the prior-fix measure (real PostgreSQL)"
    )
    args = parser.parse_args()
    sessions = json.loads(args.corpus.read_text())
    report = measure(sessions)
    text = table(report)
    if args.prior:
        import debug_paths_prior as prior
        from inprocess import leave, run

        recurrences = prior.load(args.recurrences)
        unrelated = prior.load(UNRELATED)
        report["prior_fix"] = run(lambda: prior.measure(sessions, recurrences, unrelated))
        text += "\n".join(prior.table(report["prior_fix"], TARGET))
        write_report(args.out, report, text)
        leave()
    write_report(args.out, report, text)


if __name__ == "__main__":
    main()
