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


def _mean_points(rows: list[tuple[int, float]], category: int | None = None) -> float:
    values = [r for c, r in rows if category is None or c == category]
    return round(100.0 * statistics.fmean(values), 1) if values else 0.0


def build_report(run: Run, scores: Scores, config: dict[str, Any]) -> dict[str, Any]:
    budgets = sorted(run.agents)
    recall = {
        system: {
            str(b): {
                "overall": _mean_points(scores.recall[system][b]),
                **{str(c): _mean_points(scores.recall[system][b], c) for c in CATEGORY_NAMES},
                "mean_tokens": round(statistics.fmean(scores.tokens[system][b]), 1),
            }
            for b in budgets
        }
        for system in SYSTEMS
    }
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
    for b in (b for b in TARGET_BUDGETS if b in budgets):
        best = max((s for s in SYSTEMS if s != "cairn"), key=lambda s: recall[s][str(b)]["overall"])
        margin = round(recall["cairn"][str(b)]["overall"] - recall[best][str(b)]["overall"], 1)
        out[str(b)] = {"best_baseline": best, "margin_points": margin, "met": margin >= TARGET_MARGIN}
    return out


def _timings(run: Run) -> dict[str, Any]:
    totals: dict[int, list[float]] = {b: [] for b in run.agents}
    phases: dict[str, list[float]] = {}
    for asked in run.asked:
        for budget, context in asked.answered.contexts.items():
            timings = context["timings_ms"]
            totals[budget].append(float(timings["total"]))
            for phase, ms in timings.items():
                phases.setdefault(phase, []).append(float(ms))
    walls = [asked.answered.wall_ms for asked in run.asked]
    return {
        "assembly_ms": {
            str(b): {"p50": percentile(v, 0.5), "p99": percentile(v, 0.99)} for b, v in totals.items()
        },
        "assembly_phase_ms_p50": {phase: percentile(v, 0.5) for phase, v in phases.items()},
        "question_wall_ms": {"p50": percentile(walls, 0.5), "p99": percentile(walls, 0.99)},
        "run_seconds": {k: round(v, 1) for k, v in run.seconds.items()},
    }


def markdown(report: dict[str, Any]) -> str:
    budgets = list(report["recall_points"]["cairn"])
    recall = report["recall_points"]
    head = "| system | " + " | ".join(f"{b} tok" for b in budgets) + " |"
    rule = "|---|" + "---:|" * len(budgets)
    lines = ["### Evidence recall (%), categories 1–4", "", head, rule]
    lines += [
        f"| {s} | " + " | ".join(f"{recall[s][b]['overall']:.1f}" for b in budgets) + " |"
        for s in SYSTEMS
    ]
    lines += ["", "### By category", "", "| category (n) | system | "]
    lines[-1] += " | ".join(f"{b} tok" for b in budgets) + " |"
    lines.append("|---|---|" + "---:|" * len(budgets))
    for c, name in CATEGORY_NAMES.items():
        n = report["questions"][str(c)]
        for s in SYSTEMS:
            cells = " | ".join(f"{recall[s][b][str(c)]:.1f}" for b in budgets)
            lines.append(f"| {c} {name} ({n}) | {s} | {cells} |")
    return "\n".join(lines + ["", *_summary_lines(report)]) + "\n"


def _summary_lines(report: dict[str, Any]) -> list[str]:
    lines = ["### Target: Cairn ≥ best baseline + 8 points", ""]
    for b, t in report["target"].items():
        verdict = "met" if t["met"] else "NOT met"
        lines.append(f"- {b} tokens: {t['margin_points']:+.1f} vs {t['best_baseline']} — {verdict}")
    timings = report["timings"]
    lines += ["", "### Timings", ""]
    for b, t in timings["assembly_ms"].items():
        lines.append(f"- assembly at {b} tokens: p50 {t['p50']} ms, p99 {t['p99']} ms")
    wall = timings["question_wall_ms"]
    lines.append(
        f"- question posted → all {len(timings['assembly_ms'])} contexts readable: "
        f"p50 {wall['p50']} ms, p99 {wall['p99']} ms"
    )
    lines.append(f"- phases p50 (ms): {timings['assembly_phase_ms_p50']}")
    lines.append(f"- run (s): {timings['run_seconds']}")
    lines += ["", f"Checks: {report['checks']}", f"Questions: {report['questions']}"]
    return lines
