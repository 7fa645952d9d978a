"""The scale-out benchmark's Markdown: one row per (workers, offered rate), the knee per worker
count, and what the numbers mean on this machine."""

from __future__ import annotations

from typing import Any

# A load is kept up with when every trigger is answered, this share of the offered rate
# completes, and the p99 stays under this bound (a backlog shorter than a second).
KEPT_UP_SHARE = 0.95
P99_BOUND_MS = 1000.0

READING = """\
## Reading

Every process shares the machine's cores: PostgreSQL, NATS, the API (its outbox relay
publishes each context), this benchmark's publisher and probe, and the workers. One worker
is one Python event loop: it overlaps its database round trips (8 events at once), but its
Python work (the trigger's edges, the assembly, its context's own event) runs on one core.
A second worker can use the second core only as far as PostgreSQL and the API leave it
free; a fourth adds contention (and its own copy of the in-memory graph). Past the knee the
backlog grows in JetStream and e2e grows with it: the p99 is the queue, not the assembly.

On a larger machine the knee moves with the cores left over for workers: each worker process
brings one core's worth of Python, PostgreSQL scales its share with its own cores, and the
shared durable consumer spreads the events over the processes (see the share column). Memory
grows by one in-memory graph per worker (the RSS column).

On a machine other work keeps busy (a load average well above the cores), the completed
rates say more about the scheduler than about Cairn: each runnable process gets its share
of the cores, so more worker processes take a larger share from the others and complete
more, even past the cores. The CPU per trigger does not depend on that; the capacity lines
above come from it.
"""


def knee(rounds: list[dict[str, Any]]) -> float | None:
    """The highest offered rate the worker count kept up with (None: not even the lowest)."""
    ordered = sorted(rounds, key=lambda r: r["rate_offered"])
    kept = None
    for row in ordered:
        done = row["completed"] / max(1, row["triggers"])
        fast = row["completed_per_s"] >= KEPT_UP_SHARE * row["rate_offered"]
        if done >= 1.0 and fast and row["e2e_ms"]["p99"] <= P99_BOUND_MS:
            kept = row["rate_offered"]
    return kept


def capacity(rounds: list[dict[str, Any]], cores: int) -> list[str]:
    """What the CPU per trigger says the machine could do at most, whatever else runs on it:
    the lightest load's CPU per trigger, summed over the parts, against ``cores``."""
    lightest = min(rounds, key=lambda r: r["rate_offered"])
    cpu = lightest["cpu_ms_per_trigger"]
    total = sum(cpu.values())
    worker = cpu.get("workers", 0.0)
    if total <= 0 or worker <= 0:
        return []
    parts = ", ".join(f"{name} {ms:.0f}" for name, ms in cpu.items())
    return [
        f"- CPU per trigger at {lightest['rate_offered']:g}/s with {lightest['workers']}"
        f" worker(s): {total:.0f} ms ({parts}). {cores} cores give at most"
        f" {cores * 1000 / total:.0f} triggers/s with nothing else running; one worker"
        f" process (one core of Python) at most {1000 / worker:.0f}/s.",
    ]


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Scale-out: 1, 2 and 4 workers at fixed offered loads (10k corpus)",
        "",
        f"Finished {result.get('finished_at')}; machine: {result.get('machine')}.",
        "e2e: trigger event published to JetStream → its `agent.context.v1` event on NATS.",
        "",
        "assembly: the worker's own time per assembly (the log's `total_ms`, p50). CPU: ms of"
        " CPU per trigger, by part (workers, API with its outbox relay, PostgreSQL, NATS).",
        "",
        "| workers | offered/s | completed/s | e2e p50 ms | p95 | p99 | max | assembly ms "
        "| CPU ms/trigger w+api+pg+nats | lost | twice | peak RSS MB per worker "
        "| share of assemblies |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for row in result["rounds"]:
        c, e = row["correctness"], row["e2e_ms"]
        lost = max(c["contexts_missing"], c["log_missing"])
        twice = max(c["contexts_twice"], c["log_twice"])
        rss = " / ".join(f"{x:.0f}" for x in row["worker_peak_rss_mb"])
        share = " / ".join(f"{x:.0%}" for x in row["assembly_share"])
        cpu = row["cpu_ms_per_trigger"]
        parts = "+".join(f"{cpu.get(k, 0):.0f}" for k in ("workers", "api", "postgres", "nats"))
        lines.append(
            f"| {row['workers']} | {row['offered_per_s']} | {row['completed_per_s']} "
            f"| {e['p50']} | {e['p95']} | {e['p99']} | {e['max']} "
            f"| {row['assembly_ms']['p50']} | {parts} = {sum(cpu.values()):.0f} "
            f"| {lost} | {twice} | {rss} | {share} |"
        )
    lines += ["", "## Knee", ""]
    by_workers: dict[int, list[dict[str, Any]]] = {}
    for row in result["rounds"]:
        by_workers.setdefault(row["workers"], []).append(row)
    for workers, rounds in by_workers.items():
        kept = knee(rounds)
        said = f"keeps up with {kept:g}/s" if kept is not None else "keeps up with none"
        best = max(r["completed_per_s"] for r in rounds)
        lines.append(f"- {workers} worker(s): {said} of the offered rates; most completed {best}/s")
    lines += ["", "## What the CPU allows", ""]
    machine = result.get("machine", {})
    cores = int(machine.get("cpus") or 1)
    # Before the run: the load after it is the benchmark's own last round as much as others'.
    load = max(machine.get("loadavg_before", []) or [0])
    if load > cores:
        lines += [
            f"This run began at a load average of {load:g} on {cores} cores: other work held most"
            " of the machine, so the rates and latencies above are what was left over. The CPU"
            " per trigger is not moved by that as much; the ceilings below come from it.",
            "",
        ]
    for rounds in by_workers.values():
        lines += capacity(rounds, cores)
    lines += [
        "",
        f"(Kept up: every trigger answered, ≥ {KEPT_UP_SHARE:.0%} of the offered rate completed"
        f" and e2e p99 ≤ {P99_BOUND_MS:g} ms.)",
        "",
        READING,
    ]
    return "\n".join(lines)
