"""The benchmark's report: a JSON document and the Markdown tables made from it."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from dataset import CATEGORY_NAMES
from runner import Run
from score import SYSTEMS, Scores

TARGET_BUDGETS = (1000, 2000)
TARGET_MARGIN = 8.0  # points over the best baseline


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 2) if ordered else 0.0


def _points(rows: list[tuple[int, float]], category: int | None = None) -> float:
    values = [r for c, r in rows if category is None or c == category]
    return round(100.0 * statistics.fmean(values), 1) if values else 0.0


def _recall(scores: Scores, system: str, budget: int) -> dict[str, float]:
    rows = scores.recall[system][budget]
    return {
        "overall": _points(rows),
        **{str(c): _points(rows, c) for c in CATEGORY_NAMES},
        "mean_tokens": round(statistics.fmean(scores.tokens[system][budget]), 1),
    }


def build_report(run: Run, scores: Scores, config: dict[str, Any]) -> dict[str, Any]:
    budgets = sorted(run.agents)
    recall = {s: {str(b): _recall(scores, s, b) for b in budgets} for s in SYSTEMS}
    categories = Counter(asked.question.category for asked in run.asked)
    return {
        "config": config,
        "questions": {"total": len(run.asked), **{str(c): categories[c] for c in CATEGORY_NAMES}},
        "recall_points": recall,
        "target": _target(recall, budgets),
        "timings": _timings(run),
        "cairn_evidence_fates": {str(b): dict(scores.fates[b].most_common()) for b in budgets},
        "checks": {
            "turn_blocks_compared": scores.blocks_compared,
            "turn_blocks_rendered_differently": scores.blocks_different,
            "items_from_other_sessions": scores.foreign_items,
        },
    }


def _target(recall: dict[str, Any], budgets: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for budget in (str(b) for b in TARGET_BUDGETS if b in budgets):
        baselines = [s for s in SYSTEMS if s != "cairn"]
        best = max(baselines, key=lambda s: recall[s][budget]["overall"])
        margin = round(recall["cairn"][budget]["overall"] - recall[best][budget]["overall"], 1)
        out[budget] = {"best_baseline": best, "margin_points": margin}
        out[budget]["met"] = margin >= TARGET_MARGIN
    return out


def _timings(run: Run) -> dict[str, Any]:
    totals: dict[int, list[float]] = {b: [] for b in run.agents}
    phases: dict[str, list[float]] = {}
    for asked in run.asked:
        for budget, context in asked.answered.contexts.items():
            totals[budget].append(float(context["timings_ms"]["total"]))
            for phase, ms in context["timings_ms"].items():
                phases.setdefault(phase, []).append(float(ms))
    walls = [asked.answered.wall_ms for asked in run.asked]
    return {
        "assembly_ms": {
            str(b): {"p50": percentile(v, 0.5), "p99": percentile(v, 0.99)}
            for b, v in totals.items()
        },
        "assembly_phase_ms_p50": {phase: percentile(v, 0.5) for phase, v in phases.items()},
        "question_wall_ms": {"p50": percentile(walls, 0.5), "p99": percentile(walls, 0.99)},
        "run_seconds": {k: round(v, 1) for k, v in run.seconds.items()},
    }


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(
        [
            *_recall_tables(report),
            *_target_lines(report),
            *_fate_lines(report),
            *_timing_lines(report),
        ]
    )


def _recall_tables(report: dict[str, Any]) -> list[str]:
    recall = report["recall_points"]
    budgets = list(recall["cairn"])
    columns = " | ".join(f"{b} tok" for b in budgets)
    lines = ["### Evidence recall (%), categories 1-4", "", f"| system | {columns} |"]
    lines.append("|---|" + "---:|" * len(budgets))
    for s in SYSTEMS:
        lines.append(
            f"| {s} | " + " | ".join(f"{recall[s][b]['overall']:.1f}" for b in budgets) + " |"
        )
    lines += ["", "### By category", "", f"| category (questions) | system | {columns} |"]
    lines.append("|---|---|" + "---:|" * len(budgets))
    for c, name in CATEGORY_NAMES.items():
        n = report["questions"][str(c)]
        for s in SYSTEMS:
            cells = " | ".join(f"{recall[s][b][str(c)]:.1f}" for b in budgets)
            lines.append(f"| {c} {name} ({n}) | {s} | {cells} |")
    return lines


def _target_lines(report: dict[str, Any]) -> list[str]:
    lines = ["", f"### Target: Cairn >= best baseline + {TARGET_MARGIN:g} points", ""]
    for b, t in report["target"].items():
        verdict = "met" if t["met"] else "NOT met"
        lines.append(f"- {b} tokens: {t['margin_points']:+.1f} vs {t['best_baseline']}: {verdict}")
    return lines


def _fate_lines(report: dict[str, Any]) -> list[str]:
    lines = ["", "### Where Cairn's evidence turns came from, or why they are missing", ""]
    for b in (str(b) for b in TARGET_BUDGETS if str(b) in report["cairn_evidence_fates"]):
        fates = report["cairn_evidence_fates"][b]
        lines.append(f"- {b} tokens: " + "; ".join(f"{k}: {v}" for k, v in fates.items()))
    return lines


def _timing_lines(report: dict[str, Any]) -> list[str]:
    timings, config = report["timings"], report["config"]
    lines = ["", "### Timings and setup", ""]
    for b, t in timings["assembly_ms"].items():
        lines.append(
            f"- assembly at {b} tokens (`timings_ms.total`): p50 {t['p50']} ms, p99 {t['p99']} ms"
        )
    wall = timings["question_wall_ms"]
    lines.append(
        f"- question posted -> all {len(timings['assembly_ms'])} contexts readable (wall clock): "
        f"p50 {wall['p50']} ms, p99 {wall['p99']} ms"
    )
    lines.append(f"- phases p50 (ms): {timings['assembly_phase_ms_p50']}")
    lines.append(f"- run (s): {timings['run_seconds']}")
    lines.append(f"- questions: {report['questions']}")
    lines.append(f"- config: {config}")
    lines.append(f"- checks: {report['checks']}")
    return [*lines, ""]
