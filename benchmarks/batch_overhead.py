"""What a record costs the API beyond its embedding: POST /breadcrumbs/batch against
sequential single POSTs, in process, with the in-memory hash embedder (no encoder work)
and no worker or NATS (nothing else on the cores).

Starts its own PostgreSQL; one warm-up batch, then RECORDS records each way.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/batch_overhead.py --records 500
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.ingest import bodies_of

from cairn.api.app import create_app
from cairn.config import ProcessingSettings, Settings
from cairn.db.roles import DEFAULT_APP_ROLE
from cairn.embedding import HashEmbedder
from cairn.runtime import EmbeddedPostgres


async def _measure(settings: Settings, records: int) -> dict[str, float]:
    app = create_app(settings, embedder=HashEmbedder())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=600) as c:
            bodies = bodies_of(3 * records)
            warm = await c.post("/breadcrumbs/batch", json={"records": bodies[:records]})
            warm.raise_for_status()
            started = time.perf_counter()
            batch = await c.post("/breadcrumbs/batch", json={"records": bodies[records:-records]})
            batch.raise_for_status()
            batch_s = time.perf_counter() - started
            started = time.perf_counter()
            for body in bodies[-records:]:
                (await c.post("/breadcrumbs", json=body)).raise_for_status()
            single_s = time.perf_counter() - started
    return {"batch_ms_per_record": 1000 * batch_s / records,
            "single_ms_per_record": 1000 * single_s / records}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=500)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cairn-batch-overhead-"))
    postgres = EmbeddedPostgres(root / "postgres", fast=True)
    postgres.start()
    try:
        settings = Settings(
            data_dir=root / "data",
            admin_database_url=postgres.url,
            database_url=postgres.url_for(DEFAULT_APP_ROLE),
            processing=ProcessingSettings(retry_interval_s=3600),
            log_level="WARNING",
        )
        result = asyncio.run(_measure(settings, args.records))
    finally:
        postgres.stop()
    for name, value in result.items():
        print(f"{name}: {value:.2f} ({1000 / value:.0f} records/s)")


if __name__ == "__main__":
    main()
