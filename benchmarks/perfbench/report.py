"""Headline numbers, the Markdown table and the PNG chart of a run (and across scales)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .measure import PHASES

TARGETS = {"e2e_p50": 15.0, "e2e_p99": 40.0, "ratio": 15.0, "recall": 0.95}


def _ratio(baseline: float, cairn: float) -> float | None:
    if not cairn or math.isnan(cairn) or math.isnan(baseline):
        return None
    return round(baseline / cairn, 1)


def headline(result: dict[str, Any]) -> dict[str, Any]:
    cairn, rcrt = result["cairn"], result["rcrt_baseline"]
    per_phase = {
        name: _ratio(rcrt["phases_ms"][name]["p50"], cairn["phases_ms"][name]["p50"])
        for name in PHASES
        if name in cairn["phases_ms"] and name in rcrt["phases_ms"]
    }
    search = result.get("search", {})
    searches = ("hnsw_ef40", "semantic_source", "semantic_near")
    recalls = [search[k]["recall_at_10"] for k in searches if k in search]
    sse = {str(r["subscribers"]): r["p99"] for r in result.get("sse", [])}
    return {
        "ratio_e2e_p50": _ratio(rcrt["e2e_ms"]["p50"], cairn["e2e_ms"]["p50"]),
        "ratio_e2e_p99": _ratio(rcrt["e2e_ms"]["p99"], cairn["e2e_ms"]["p99"]),
        "ratio_phases_p50": per_phase,
        "search_recall_at_10": min(recalls) if recalls else None,
        "ingest_per_s": result.get("ingest", {}).get("posts_per_s"),
        "sse_p99_ms_by_subscribers": sse,
    }


def _cell(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def markdown(result: dict[str, Any]) -> str:
    cairn, cold, rcrt = result["cairn"], result["cairn"]["cold"], result["rcrt_baseline"]
    corpus = result["corpus"]
    lines = [
        f"### {result['name']}: {result['scale']:,} breadcrumbs, {corpus['edges']:,} edges",
        "",
        f"{cairn['e2e_ms']['n']} warm triggers and {cold['e2e_ms']['n']} cold ones across "
        f"sessions; milliseconds. e2e = trigger event → `agent.context.v1` committed; "
        f"publish = commit → event on NATS. Texts embedded: {corpus['texts_unique']:,}.",
        "",
        "| phase | Cairn p50 | p95 | p99 | Cairn cold p50 | p99 | RCRT-style p50 | p95 | p99 "
        "| ratio p50 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [(name, name) for name in PHASES] + [("**e2e (committed)**", "e2e_ms")]
    rows.append(("e2e + publish", "e2e_published_ms"))
    for label, key in rows:
        warm_s = cairn["phases_ms"].get(key) or cairn.get(key)
        cold_s = cold["phases_ms"].get(key) or cold.get(key)
        base_s = rcrt["phases_ms"].get(key) or rcrt.get(key)
        if not warm_s or not base_s:
            continue
        cells = [
            warm_s["p50"],
            warm_s["p95"],
            warm_s["p99"],
            cold_s["p50"] if cold_s else None,
            cold_s["p99"] if cold_s else None,
            base_s["p50"],
            base_s["p95"],
            base_s["p99"],
        ]
        ratio = _ratio(base_s["p50"], warm_s["p50"])
        lines.append(
            f"| {label} | " + " | ".join(_cell(c) for c in cells) + f" | {_cell(ratio)}x |"
        )
    search = result.get("search", {})
    lines += ["", "| search | recall@10 | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
    for key, label in (
        ("hnsw_ef40", "HNSW, ef_search 40 (API search, edge builder)"),
        ("hnsw_ef100", "HNSW, ef_search 100"),
        ("semantic_source", "semantic source (schema-filtered, exact)"),
        ("semantic_near", "semantic source (partial HNSW per schema set, ef_search 100)"),
    ):
        if key in search:
            s = search[key]
            lines.append(
                f"| {label} | {s['recall_at_10']:.3f} | {_cell(s['latency_ms']['p50'])} "
                f"| {_cell(s['latency_ms']['p99'])} |"
            )
    lines.append("")
    if "ingest" in result:
        ingest = result["ingest"]
        lines.append(
            f"Ingest over HTTP (20 clients, {ingest['requests']} posts, each embedded): "
            f"**{ingest['posts_per_s']}/s**, latency p50 {ingest['latency_ms']['p50']} ms, "
            f"p99 {ingest['latency_ms']['p99']} ms."
        )
    for sse in result.get("sse", []):
        lines.append(
            f"SSE, commit → client, {sse['subscribers']} subscribers x {sse['events']} events: "
            f"p50 {sse['p50']} ms, p99 {sse['p99']} ms ({sse['received']} deliveries)."
        )
    rss = [
        f"{k.replace('_rss_mb', '')} {result[k]} MB"
        for k in ("server_rss_mb", "worker_rss_mb")
        if result.get(k) is not None
    ]
    lines.append(f"Resident memory: {', '.join(rss)}.")
    lines.append(
        f"Ratio baseline/Cairn, e2e p50: **{result['ratio_e2e_p50']}x**, "
        f"p99: {result['ratio_e2e_p99']}x. Load average before/after: "
        f"{result['machine']['loadavg_before'][0]} / {result['machine']['loadavg_after'][0]} "
        f"on {result['machine']['cpus']} cores."
    )
    return "\n".join(lines) + "\n"


def write(result: dict[str, Any], directory: Path) -> None:
    name = result["name"]
    (directory / f"{name}.md").write_text(markdown(result))
    chart(result, directory / f"{name}.png")
    by_scale(directory)


def chart(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cairn, rcrt = result["cairn"]["phases_ms"], result["rcrt_baseline"]["phases_ms"]
    names = [n for n in PHASES if n in cairn and n in rcrt] + ["e2e"]
    cairn_p50 = [cairn[n]["p50"] for n in names[:-1]] + [result["cairn"]["e2e_ms"]["p50"]]
    rcrt_p50 = [rcrt[n]["p50"] for n in names[:-1]] + [result["rcrt_baseline"]["e2e_ms"]["p50"]]
    cairn_p99 = [cairn[n]["p99"] for n in names[:-1]] + [result["cairn"]["e2e_ms"]["p99"]]
    rcrt_p99 = [rcrt[n]["p99"] for n in names[:-1]] + [result["rcrt_baseline"]["e2e_ms"]["p99"]]
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.2
    xs = range(len(names))
    floor = 0.01
    for offset, values, label, colour in (
        (-1.5, cairn_p50, "Cairn p50", "#2a7ab0"),
        (-0.5, cairn_p99, "Cairn p99", "#8cc3e8"),
        (0.5, rcrt_p50, "RCRT-style p50", "#c0392b"),
        (1.5, rcrt_p99, "RCRT-style p99", "#f1948a"),
    ):
        ax.bar(
            [x + offset * width for x in xs],
            [max(v, floor) for v in values],
            width,
            label=label,
            color=colour,
        )
    ax.set_yscale("log")
    ax.set_xticks(list(xs), names, rotation=30, ha="right")
    ax.set_ylabel("ms (log scale)")
    ax.set_title(f"Context assembly by phase, {result['scale']:,} breadcrumbs ({result['name']})")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def by_scale(directory: Path) -> None:
    """e2e and per-phase p50 by scale, over every run in the results directory."""
    runs = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "rcrt_baseline" in data and "scale" in data:
            runs.append(data)
    if not runs:
        return
    latest: dict[int, dict[str, Any]] = {}
    for run in runs:
        if run["scale"] not in latest or run["finished_at"] > latest[run["scale"]]["finished_at"]:
            latest[run["scale"]] = run
    scales = sorted(latest)
    lines = [
        "| scale | edges | Cairn e2e p50 | p95 | p99 | RCRT-style e2e p50 | p99 | ratio p50 "
        "| recall@10 | ingest/s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scale in scales:
        run = latest[scale]
        c, b = run["cairn"]["e2e_ms"], run["rcrt_baseline"]["e2e_ms"]
        lines.append(
            f"| {scale:,} | {run['corpus']['edges']:,} | {_cell(c['p50'])} | {_cell(c['p95'])} "
            f"| {_cell(c['p99'])} | {_cell(b['p50'])} | {_cell(b['p99'])} "
            f"| {run['ratio_e2e_p50']}x | {run['search_recall_at_10']} | {run['ingest_per_s']} |"
        )
    (directory / "by-scale.md").write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for who, style in (("cairn", "-"), ("rcrt_baseline", "--")):
        for phase in ("seeds_semantic", "graph", "render_items", "select", "write"):
            values = [latest[s][who]["phases_ms"].get(phase, {}).get("p50") for s in scales]
            if all(v is not None for v in values):
                ax.plot(scales, values, style, marker="o", label=f"{who} {phase}")
        ax.plot(
            scales,
            [latest[s][who]["e2e_ms"]["p50"] for s in scales],
            style,
            marker="s",
            linewidth=3,
            label=f"{who} e2e",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("breadcrumbs")
    ax.set_ylabel("p50 ms (log scale)")
    ax.set_title("Latency by scale: Cairn (solid) and RCRT-style baseline (dashed)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(directory / "by-scale.png", dpi=110)
    plt.close(fig)
