"""Reindex throughput: ``cairn reindex`` over RECORDS stored records, per batch size.

Starts an embedded PostgreSQL in a fresh directory and the API in-process (no NATS: no
worker), posts RECORDS distinct records (the texts of ``benchmarks/ingest.py``), then runs
the command's reindex in-process once per batch size over every record and reports
records/s (each run re-renders, re-embeds, relabels and rebuilds the edges of all of them).

    .venv/bin/python benchmarks/reindex.py --records 2000 --batches 16,64,256
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.ingest import bodies_of

from cairn.api.app import create_app
from cairn.config import EmbeddingSettings, ReindexSettings, Settings
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.reindex.command import reindex
from cairn.reindex.jobs import Selection
from cairn.runtime import EmbeddedPostgres

REPO = Path(__file__).resolve().parents[1]
CLIENTS = 16


async def _post_all(settings: Settings, records: int) -> None:
    app = create_app(settings)
    bodies = bodies_of(records)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:

            async def client(share: list[dict[str, object]]) -> None:
                for body in share:
                    response = await http.post("/breadcrumbs", json=body)
                    response.raise_for_status()

            await asyncio.gather(*(client(bodies[n::CLIENTS]) for n in range(CLIENTS)))


async def _run(settings: Settings, records: int, batches: list[int]) -> dict[str, Any]:
    await _post_all(settings, records)
    runs = []
    for batch in batches:
        tuned = settings.model_copy(update={"reindex": ReindexSettings(batch=batch)})
        summary = await reindex(tuned, Selection(), None, show_progress=False)
        done = summary.count("done")
        runs.append(
            {
                "batch": batch,
                "records": done,
                "seconds": round(summary.seconds, 2),
                "records_per_s": round(done / summary.seconds, 1),
                "edges": summary.count("edges"),
                "failed": summary.count("failed"),
            }
        )
        print(json.dumps(runs[-1]), flush=True)
    return {"records": records, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--batches", default="16,64,256")
    parser.add_argument("--model-dir", type=Path, default=REPO / ".cairn/models")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/reindex.json")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cairn-reindex-bench-"))
    postgres = EmbeddedPostgres(root / "postgres", fast=True)
    postgres.start()
    try:
        settings = Settings(
            data_dir=root / "data",
            admin_database_url=postgres.url,
            database_url=postgres.url_for(DEFAULT_APP_ROLE),
            embedding=EmbeddingSettings(model_dir=args.model_dir),
            log_level="WARNING",
        )
        batches = [int(b) for b in args.batches.split(",")]
        report = asyncio.run(_run(settings, args.records, batches))
    finally:
        postgres.stop()
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
