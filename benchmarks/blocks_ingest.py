"""What storing a record's block costs the worker per record written, and the backfill of a
COPY-loaded corpus (issue 20, context.block_store).

    .venv/bin/python benchmarks/blocks_ingest.py --scale 100000 --unique-texts 100000

Loads the benchmark corpus (``benchmarks/perf.py``'s) into a fresh embedded PostgreSQL
(the load's own backfill is timed: ``blocks_s``), forgets the stored blocks, then takes
``--records`` records in turn, as the worker does per event: one transaction reading the
record, alternately followed and not by ``ContextBuilder.store_block`` (render, count, one
INSERT, in a transaction of its own). Reports the medians in CPU and wall ms, and their difference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from perf import CACHE, corpus_and_triggers  # noqa: E402
from perfbench import load  # noqa: E402
from perfbench.corpus import OWNER  # noqa: E402

from cairn.breadcrumbs import repository as breadcrumbs  # noqa: E402
from cairn.config import Settings  # noqa: E402
from cairn.context.builder import ContextBuilder  # noqa: E402
from cairn.db.engine import create_engine, create_session_factory, tenant_session  # noqa: E402
from cairn.transforms import Transforms  # noqa: E402
from cairn.worker.app import NoEmbedder  # noqa: E402


async def measure(database_url: str, ids: list[uuid.UUID]) -> dict[str, Any]:
    settings = Settings(database_url=database_url, data_dir=CACHE / "data")
    engine = create_engine(database_url, settings)
    sessions = create_session_factory(engine)
    builder = ContextBuilder.create(
        settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    async with engine.begin() as connection:  # the worker has stored none of them yet
        await connection.exec_driver_sql("TRUNCATE record_blocks")
    samples: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for n, record_id in enumerate(ids):
        store = n % 2 == 1
        cpu, wall = time.process_time(), time.perf_counter()
        async with tenant_session(sessions, OWNER) as session, session.begin():
            row = await breadcrumbs.get(session, OWNER, record_id)
        if store and row is not None:  # as the worker does: after the step, on its own
            await builder.store_block(row)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        samples[store].append((cpu * 1000, wall * 1000))
    async with engine.connect() as connection:
        stored = (await connection.exec_driver_sql("SELECT count(*) FROM record_blocks")).scalar()
    await engine.dispose()
    result: dict[str, Any] = {"records": len(ids), "stored": stored}
    for store, rows in samples.items():
        name = "with" if store else "without"
        result[f"{name}_cpu_ms"] = round(statistics.median(c for c, _ in rows), 3)
        result[f"{name}_wall_ms"] = round(statistics.median(w for _, w in rows), 3)
    result["added_cpu_ms"] = round(result["with_cpu_ms"] - result["without_cpu_ms"], 3)
    result["added_wall_ms"] = round(result["with_wall_ms"] - result["without_wall_ms"], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--unique-texts", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=4000)
    args = parser.parse_args()
    corpus, _ = corpus_and_triggers(args.scale, args.unique_texts, 1, "blocks-ingest-events")
    step = max(1, len(corpus.rows) // args.records)
    ids = [uuid.UUID(str(row["id"])) for row in corpus.rows[::step]][: args.records]
    with load.services(CACHE / "run-blocks-ingest") as services:
        timings = asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        print(json.dumps({"scale": args.scale, **timings}), flush=True)
        print(json.dumps(asyncio.run(measure(services.database_url, ids))), flush=True)


if __name__ == "__main__":
    main()
