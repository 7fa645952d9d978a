"""How often the partial HNSW index's scan misses the semantic source's nearest records, and
whether a guard sees it (issue 20).

    .venv/bin/python benchmarks/seeds_guard.py --scale 100000 --database-url URL --queries 1000

Against a database loaded by ``perfbench.load`` (the default agent's partial indexes built),
for ``--queries`` benchmark triggers: the index's pool (50, ef_search 200, as the source
scans it) against the exact 50 nearest searched records (numpy over the corpus's vectors):
recall@10 and @50 per query. The guard measured is the one the statement can afford
without reading more: the keyword and full-text nominations' similarities are computed
anyway; a nominated record nearer than the pool's farthest proves the scan missed it.
For each query it reports whether the guard fires, and whether the scan missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
from perfbench import corpus as corpus_module  # noqa: E402
from perfbench.corpus import OWNER  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.ext.asyncio import async_sessionmaker  # noqa: E402

from cairn.config import Settings  # noqa: E402
from cairn.context.agents import SemanticSource  # noqa: E402
from cairn.context.blacklist import excluded_schemas  # noqa: E402
from cairn.context.sources import nearest, semantic  # noqa: E402
from cairn.context.terms import CommonWords  # noqa: E402
from cairn.context.trigger import Probe  # noqa: E402
from cairn.db.engine import create_engine  # noqa: E402
from cairn.embedding import tag_pointers  # noqa: E402

SOURCE = SemanticSource(True, ("knowledge.v1", "note.v1"), 5, 0.3, "global")
POOL = 50
FINAL = "SELECT id, similarity, lexical, score, isolated FROM kept ORDER BY score DESC, id::text"
# What the statement knows after its nominations: each scored record's similarity, and
# whether the index's scan returned it.
PROBE = (
    "SELECT CAST(scored.id AS text) AS id, scored.similarity,"
    " scored.id IN (SELECT id FROM nearest) AS from_index FROM scored"
)


async def run(args: argparse.Namespace, corpus: corpus_module.Corpus) -> dict[str, Any]:
    engine = create_engine(args.database_url, Settings())
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    literal = nearest.schema_list(SOURCE.schemas)
    assert literal is not None
    ids = np.array([str(row["id"]) for row in corpus.rows])
    searched = np.array([row["schema_name"] in SOURCE.schemas for row in corpus.rows])
    matrix = np.stack([_vector(corpus, row) for row in corpus.rows])
    subset, subset_ids = matrix[searched], ids[searched]
    picks = corpus.triggers[:: max(1, len(corpus.triggers) // args.queries)][: args.queries]
    rows: list[dict[str, Any]] = []
    async with sessions() as session:
        common = await CommonWords().of(session, OWNER)
        await session.commit()
        for index in picks:
            row = corpus.rows[index]
            sims = subset @ matrix[index]
            order = np.argsort(-sims)[:POOL]
            exact = dict(zip(subset_ids[order], sims[order], strict=True))
            pointers = tuple(dict.fromkeys([*tag_pointers(row["tags"]), *row["entity_keywords"]]))
            hybrid = semantic._hybrid_sql(
                OWNER, Probe(row["id"]), SOURCE, pointers, common, (), excluded_schemas(None),
                near=literal,
            )  # fmt: skip
            assert hybrid is not None and FINAL in hybrid[0]
            sql = hybrid[0].replace(FINAL, PROBE)
            found = (await session.execute(text(sql), hybrid[1])).mappings().all()
            await session.commit()
            pool = [(r["id"], float(r["similarity"])) for r in found if r["from_index"]]
            pool.sort(key=lambda pair: -pair[1])
            # Hits of the pool's own top 10 (texts repeat: more than 10 may reach the 10th).
            top = [s for _, s in pool[:10]]
            others = [float(r["similarity"]) for r in found if not r["from_index"]]
            tenth = float(sims[order[9]]) - 1e-5
            last = float(sims[order[-1]]) - 1e-5
            guard = bool(others and pool and max(others) > min(s for _, s in pool) + 1e-6)
            wide = None
            if guard or len(pool) < POOL or sum(s >= tenth for s in top) < 10:
                # What a second scan with the widest beam (ef_search 1000) would have found.
                await session.execute(text("SET LOCAL hnsw.ef_search = 1000"))
                scan = await session.execute(
                    text(
                        "SELECT 1 - (embedding <=> CAST(:q AS vector)) FROM breadcrumbs"
                        f" WHERE owner_id = :owner AND schema_name = ANY({literal})"
                        " AND id <> :trigger ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"
                    ),
                    {"owner": OWNER, "q": _text(matrix[index]), "k": POOL, "trigger": row["id"]},
                )
                wide = sum(float(s) >= tenth for (s,) in scan.all()[:10]) / 10
                await session.commit()
            rows.append({
                "recall10_wide": wide,
                "recall10": sum(s >= tenth for s in top) / 10,
                "recall50": sum(s >= last for _, s in pool) / POOL,
                "pool": len(pool),
                "guard": guard,
                "best_exact": float(sims[order[0]]),
                "best_pool": max((s for _, s in pool), default=0.0),
                "exact_in_pool": len(set(exact) & {i for i, _ in pool}),
            })  # fmt: skip
    await engine.dispose()
    recall10 = np.array([r["recall10"] for r in rows])
    guard = np.array([r["guard"] for r in rows])
    missed = recall10 < 1.0
    poor = recall10 < 0.5
    return {
        "scale": corpus.scale, "queries": len(rows),
        "recall_at_10": round(float(recall10.mean()), 4),
        "recall_at_50": round(float(np.mean([r["recall50"] for r in rows])), 4),
        "queries_recall10_below_1": int(missed.sum()),
        "queries_recall10_below_0.5": int(poor.sum()),
        "short_pools": sum(r["pool"] < POOL for r in rows),
        "guard_fires": int(guard.sum()),
        "guard_fires_when_recall10_below_1": int((guard & missed).sum()),
        "guard_fires_when_recall10_below_0.5": int((guard & poor).sum()),
        "recall10_after_wide_rescan_when_guard_fires": [
            (r["recall10"], r["recall10_wide"]) for r in rows if r["guard"]
        ],
        "worst": sorted(rows, key=lambda r: r["recall10"])[:5],
    }  # fmt: skip


def _text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def _vector(corpus: corpus_module.Corpus, row: dict[str, Any]) -> np.ndarray:
    vector = corpus.vector_of(row)
    return np.zeros(384, dtype=np.float32) if vector is None else vector


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--unique-texts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--database-url", required=True)
    args = parser.parse_args()
    corpus = corpus_module.load_or_build(
        args.scale,
        REPO / ".cairn-bench",
        REPO / ".cairn" / "models",
        unique_texts=args.unique_texts,
    )
    print(json.dumps(asyncio.run(run(args, corpus)), indent=1))


if __name__ == "__main__":
    main()
