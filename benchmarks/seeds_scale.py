"""The semantic source's vector nominations: exact ranking of the filtered subset against the
partial HNSW index per schema set (``cairn.context.sources.nearest``), issue 20.

    .venv/bin/python benchmarks/seeds_scale.py --scale 100000 --unique-texts 100000
    .venv/bin/python benchmarks/seeds_scale.py --scale 10000 --unique-texts 10000

Loads the benchmark corpus (``benchmarks/perf.py``'s, from ``.cairn-bench/``) into a fresh
embedded PostgreSQL, builds the default agent's partial index (knowledge.v1, note.v1) and
runs, per trigger and interleaved (exact, near, exact, near, ...):

- the whole semantic source query (what the seed stage sends), exact and near: latency, and
  whether the seeds (ids, in order) and their scores agree;
- the vector half alone: the index's top 10 of the tenant's subset against the exact top 10
  (numpy over the same vectors; a hit reaches the 10th exact similarity), and its latency.

Both paths are forced (the source itself stays exact below ``NEAR_SEARCH_ROWS`` searched
records, as at 10k). Results are appended to ``benchmarks/results/seeds_scale.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
from perfbench import corpus as corpus_module, load  # noqa: E402
from perfbench.corpus import OWNER  # noqa: E402
from perfbench.measure import summary  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker  # noqa: E402

from cairn.config import Settings  # noqa: E402
from cairn.context.agents import SemanticSource  # noqa: E402
from cairn.context.blacklist import excluded_schemas  # noqa: E402
from cairn.context.sources import nearest, semantic  # noqa: E402
from cairn.context.terms import CommonWords  # noqa: E402
from cairn.context.trigger import Probe  # noqa: E402
from cairn.db.engine import create_engine  # noqa: E402
from cairn.embedding import tag_pointers  # noqa: E402

CACHE = REPO / ".cairn-bench"
RESULTS = REPO / "benchmarks" / "results" / "seeds_scale.md"
EXPLAINED = RESULTS.with_name("seeds_scale-explain.txt")
MODES = ("exact", "near")
SOURCE = SemanticSource(True, ("knowledge.v1", "note.v1"), 5, 0.3, "global")
K = 10
POOL = max(50, 4 * SOURCE.limit)  # the source's vector pool (context.sources.semantic)
NONE = excluded_schemas(None)


async def run(
    args: argparse.Namespace, corpus: corpus_module.Corpus, url: str, index_s: float
) -> dict[str, Any]:
    engine = create_engine(url, Settings())
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    literal = nearest.schema_list(SOURCE.schemas)
    assert literal is not None
    # perfbench.load built the index (as a running Cairn would have, context.sources.nearest).
    async with engine.connect() as connection:
        await connection.execute(text("ANALYZE breadcrumbs"))
    picks = corpus.triggers[:: max(1, len(corpus.triggers) // args.triggers)][: args.triggers]
    matrix = np.stack([_vector(corpus, row) for row in corpus.rows])
    searched = np.array([row["schema_name"] in SOURCE.schemas for row in corpus.rows])
    modes = [Mode("exact", None, 0), *(Mode(f"near{f}", literal, f) for f in args.ef_factors)]
    times: dict[str, list[float]] = {f"{kind}{m.name}": [] for m in modes for kind in ("", "v_")}
    agree: dict[str, list[tuple[bool, bool, float, float]]] = {m.name: [] for m in modes[1:]}
    recalls: dict[str, list[float]] = {m.name: [] for m in modes[1:]}
    async with sessions() as session:
        common = await CommonWords().of(session, OWNER)
        subset = await session.scalar(
            text(f"SELECT count(*) FROM breadcrumbs WHERE schema_name = ANY({literal})")
        )
        await session.commit()
        for n, index in enumerate(picks):
            row = corpus.rows[index]
            pointers = tuple(dict.fromkeys([*tag_pointers(row["tags"]), *row["entity_keywords"]]))
            found: dict[str, list[tuple[str, float]]] = {}
            order = modes[n % len(modes) :] + modes[: n % len(modes)]
            for _ in range(args.reps):
                for mode in order:
                    ms, found[mode.name] = await _source(session, row["id"], pointers, common, mode)
                    times[mode.name].append(ms)
                for mode in order:
                    ms, _ids = await _vector_top(session, matrix[index], literal, mode)
                    times[f"v_{mode.name}"].append(ms)
            exact = found["exact"]
            for mode in modes[1:]:
                near = found[mode.name]
                overlap = len({i for i, _ in exact} & {i for i, _ in near}) / max(1, len(exact))
                diff = max((abs(a[1] - b[1]) for a, b in zip(exact, near, strict=False)), default=0)
                same = [i for i, _ in exact] == [i for i, _ in near]
                agree[mode.name].append((same, exact == near, overlap, diff))
                recalls[mode.name].append(
                    await _recall(session, matrix, searched, index, literal, mode)
                )
        plans = [await _explain(session, corpus.rows[picks[0]], common, m) for m in modes]
    await engine.dispose()
    EXPLAINED.with_name(f"seeds_scale-explain-{corpus.scale}.txt").write_text("\n\n".join(plans))
    return {
        "scale": corpus.scale, "texts_unique": corpus.texts_unique, "subset": int(subset or 0),
        "near_rows": nearest.NEAR_SEARCH_ROWS,
        "triggers": len(picks), "reps": args.reps, "index_build_s": round(index_s, 2),
        "latency_ms": {name: summary(samples) for name, samples in times.items()},
        "near": {
            m.name: {
                "ef_search": m.factor * POOL,
                "recall_at_10": round(float(np.mean(recalls[m.name])), 4),
                "recall_at_10_min": round(float(np.min(recalls[m.name])), 2),
                "seed_ids_identical": sum(a[0] for a in agree[m.name]),
                "seeds_identical": sum(a[1] for a in agree[m.name]),
                "seed_overlap": round(float(np.mean([a[2] for a in agree[m.name]])), 4),
                "max_score_diff": round(max(a[3] for a in agree[m.name]), 6),
            }
            for m in modes[1:]
        },
    }  # fmt: skip


@dataclass(frozen=True)
class Mode:
    """Exact (``literal`` None), or through the index with ef_search = ``factor`` x pool."""

    name: str
    literal: str | None
    factor: int

    def params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The source statement's parameters with this path's ef_search (it sets it itself)."""
        if self.literal is None:
            return params
        return params | {"ef_search": str(self.factor * POOL)}

    async def set_ef(self, session: AsyncSession) -> None:
        if self.literal is not None:
            await session.execute(text(f"SET LOCAL hnsw.ef_search = {self.factor * POOL:d}"))


async def _source(
    session: AsyncSession,
    trigger: uuid.UUID,
    pointers: tuple[str, ...],
    common: Any,
    mode: Mode,
) -> tuple[float, list[tuple[str, float]]]:
    """One semantic source query as the seed stage sends it, in its own transaction."""
    hybrid = semantic._hybrid_sql(
        OWNER, Probe(trigger), SOURCE, pointers, common, (), NONE, near=mode.literal
    )
    assert hybrid is not None
    sql, params = hybrid
    started = time.perf_counter()
    rows = (await session.execute(text(sql), mode.params(params))).mappings().all()
    ms = (time.perf_counter() - started) * 1000
    await session.commit()
    seeds = [(str(r["id"]), round(float(r["score"]), 9)) for r in rows if r["score"] >= 0.3]
    return ms, seeds


async def _explain(session: AsyncSession, row: dict[str, Any], common: Any, mode: Mode) -> str:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the source's statement for one trigger."""
    pointers = tuple(dict.fromkeys([*tag_pointers(row["tags"]), *row["entity_keywords"]]))
    hybrid = semantic._hybrid_sql(
        OWNER, Probe(row["id"]), SOURCE, pointers, common, (), NONE, near=mode.literal
    )
    assert hybrid is not None
    explained = await session.execute(
        text("EXPLAIN (ANALYZE, BUFFERS) " + hybrid[0]), mode.params(hybrid[1])
    )
    plan = "\n".join(line for (line,) in explained.all())
    await session.commit()
    return f"-- {mode.name}\n{plan}"


async def _vector_top(
    session: AsyncSession, probe: np.ndarray, literal: str, mode: Mode
) -> tuple[float, list[str]]:
    """The tenant's 10 nearest searched records: the subset ranked exactly, or the index."""
    subset = f"owner_id = :owner AND schema_name = ANY({literal})"
    if mode.literal is None:
        sql = (
            f"WITH s AS MATERIALIZED (SELECT id, embedding FROM breadcrumbs WHERE {subset})"
            " SELECT id FROM s ORDER BY embedding <=> CAST(:q AS vector), id LIMIT :k"
        )
    else:
        sql = (
            f"SELECT id FROM breadcrumbs WHERE {subset}"
            " ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"
        )
    started = time.perf_counter()
    await mode.set_ef(session)
    params = {"owner": OWNER, "q": _text(probe), "k": K}
    ids = [str(r[0]) for r in (await session.execute(text(sql), params)).all()]
    ms = (time.perf_counter() - started) * 1000
    await session.commit()
    return ms, ids


async def _recall(
    session: AsyncSession,
    matrix: np.ndarray,
    searched: np.ndarray,
    index: int,
    literal: str,
    mode: Mode,
) -> float:
    """Recall@10 of the index's top 10 (a hit reaches the 10th exact similarity)."""
    sims = np.where(searched, matrix @ matrix[index], -2.0)
    threshold = float(np.sort(sims)[-K]) - 1e-5
    await mode.set_ef(session)
    rows = await session.execute(
        text(
            "SELECT 1 - (embedding <=> CAST(:q AS vector)) FROM breadcrumbs"
            f" WHERE owner_id = :owner AND schema_name = ANY({literal})"
            " ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"
        ),
        {"owner": OWNER, "q": _text(matrix[index]), "k": K},
    )
    hits = sum(1 for (similarity,) in rows.all() if similarity >= threshold)
    await session.commit()
    return hits / K


def _vector(corpus: corpus_module.Corpus, row: dict[str, Any]) -> np.ndarray:
    vector = corpus.vector_of(row)
    return np.zeros(384, dtype=np.float32) if vector is None else vector


def _text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def _report(out: dict[str, Any]) -> str:
    lat = out["latency_ms"]
    lines = [
        f"### {out['scale']:,} records ({out['texts_unique']:,} distinct texts):"
        f" {out['subset']:,} searched (knowledge.v1, note.v1)",
        "",
        f"{out['triggers']} triggers x {out['reps']} repetitions, the paths interleaved (order"
        f" rotated per trigger); partial index built in {out['index_build_s']} s. The source"
        f" takes the index from {out['near_rows']:,} searched records of a tenant; every path"
        " is forced here. Milliseconds.",
        "",
        "| path | source p50 | p95 | p99 | vector top 10 p50 | p99 | recall@10 (min) |"
        " seeds identical (ids / ids+scores) | overlap | max score diff |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ["exact", *out["near"]]:
        s, v = lat[name], lat[f"v_{name}"]
        cells = [f"{s['p50']:.2f}", f"{s['p95']:.2f}", f"{s['p99']:.2f}"]
        cells += [f"{v['p50']:.2f}", f"{v['p99']:.2f}"]
        if name == "exact":
            label = "exact (subset scanned)"
            cells += ["1 (exact)", "-", "-", "-"]
        else:
            near = out["near"][name]
            label = f"partial HNSW, ef_search {near['ef_search']}"
            cells += [
                f"{near['recall_at_10']} ({near['recall_at_10_min']})",
                f"{near['seed_ids_identical']} / {near['seeds_identical']} of {out['triggers']}",
                f"{near['seed_overlap']}",
                f"{near['max_score_diff']}",
            ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--unique-texts", type=int, default=100_000)
    parser.add_argument("--triggers", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ef-factors", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    corpus = corpus_module.load_or_build(
        args.scale, CACHE, REPO / ".cairn" / "models", unique_texts=args.unique_texts
    )
    with load.services(CACHE / f"run-seeds-{args.scale}") as services:
        timings = asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        print(timings)
        out = asyncio.run(run(args, corpus, services.database_url, timings["semantic_index_s"]))
    print(json.dumps(out, indent=1))
    print(_report(out))
    if not args.no_write:
        with RESULTS.open("a") as handle:
            handle.write(_report(out) + "\n")


if __name__ == "__main__":
    main()
