"""What one copy of an assembled context costs PostgreSQL to store, per form of the copy
and per column storage (pglz-compressed or EXTERNAL), by EXPLAIN (ANALYZE, BUFFERS, WAL).

    .venv/bin/python benchmarks/write_copies.py --reps 3
    .venv/bin/python benchmarks/write_copies.py --shapes --reps 10

``--shapes``: the whole write instead (record, history, event, commit), in three shapes,
alternating, each write its own transaction: as the worker writes (one statement; the
record's column uncompressed, the history compressing the upsert's returned document, the
event's column uncompressed), ``copied`` (the record compressed, then its history row and
event copied from the stored row in a second statement: the compressed value is copied,
not compressed again) and ``uncompressed`` (one statement, the history's column
uncompressed too). Wall time per write, the server's CPU per write (/proc) and WAL bytes.

Loads the perf corpus (10k records) into a fresh embedded PostgreSQL, writes 60 contexts
as the worker does (``write_phase.py``), then inserts each context into two scratch tables
(default storage and EXTERNAL) in the forms the write's statement makes: the event payload
by ``jsonb ||`` over the stored context, the same payload parsed from text, the context
parsed from text (the record's column), and a stored jsonb copied. Variants alternate;
medians of execution time and WAL bytes. Also checks that both forms of the payload are the
same jsonb.
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

import asyncpg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from proc_cpu import scheduled_s  # noqa: E402

_KEEP = " AND $2::text IS NOT NULL AND $3::text IS NOT NULL AND $4::text IS NOT NULL"
_CONCAT = (
    "CAST($2::text AS jsonb) || jsonb_build_object('type', 't', 'change', 'replace',"
    " 'version', 3, 'updated_at', 'x', 'context', context)"
)
_FORMS = {
    "concat": _CONCAT,  # the event's payload as the statement builds it
    "text": "CAST($3::text AS jsonb)",  # the same payload, parsed from text
    "record": "CAST($4::text AS jsonb)",  # the record's column, parsed from text
    "copy": "context",  # a stored jsonb copied
}
VARIANTS = {
    f"{form}_{table}": f"INSERT INTO x_{table} (payload) SELECT {sql} FROM src WHERE id = $1{_KEEP}"
    for form, sql in _FORMS.items()
    for table in ("main", "ext")
}


# The contexts the worker wrote, as the source of every copy.
_CONTEXTS = (
    "CREATE TABLE src AS SELECT id, context FROM breadcrumbs WHERE schema_name = 'agent.context.v1'"
)


async def experiment(dsn: str, reps: int) -> None:
    c = await asyncpg.connect(dsn)
    await c.execute(_CONTEXTS)
    await c.execute("CREATE TABLE x_main (id bigserial PRIMARY KEY, payload jsonb)")
    await c.execute("CREATE TABLE x_ext (id bigserial PRIMARY KEY, payload jsonb)")
    await c.execute("ALTER TABLE x_ext ALTER COLUMN payload SET STORAGE EXTERNAL")
    rows = await c.fetch(
        "SELECT id, context::text AS t, octet_length(context::text) AS n,"
        " pg_column_size(context) AS s FROM src"
    )
    text_bytes = statistics.median(r["n"] for r in rows)
    stored = statistics.median(r["s"] for r in rows)
    print(f"contexts {len(rows)}, text bytes p50 {text_bytes}, stored p50 {stored}")
    times: dict[str, list[float]] = {k: [] for k in VARIANTS}
    wal: dict[str, list[float]] = {k: [] for k in VARIANTS}
    for rep in range(reps):
        for r in rows:
            fields = {"event_id": "e", "breadcrumb_id": str(r["id"]), "owner_id": "o",
                      "schema_name": "s", "title": "t", "tags": ["a"]}  # fmt: skip
            head = json.dumps(fields)
            tail = {"type": "t", "change": "replace", "version": 3, "updated_at": "x"}
            full = json.dumps(fields | tail)[:-1] + ',"context":' + r["t"] + "}"
            order = list(VARIANTS) if rep % 2 == 0 else list(reversed(VARIANTS))
            for name in order:
                plan = await c.fetchval(
                    "EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) " + VARIANTS[name],
                    r["id"], head, full, r["t"],
                )  # fmt: skip
                found = json.loads(plan)[0]
                times[name].append(found["Execution Time"])
                wal[name].append(found["Plan"].get("WAL Bytes", 0))
    print("| variant | execution p50 ms | WAL bytes p50 |")
    print("|---|---:|---:|")
    for name in VARIANTS:
        ms, wal_bytes = statistics.median(times[name]), statistics.median(wal[name])
        print(f"| {name} | {ms:.3f} | {wal_bytes:.0f} |")
    same = await c.fetchval(
        "SELECT count(*) FROM src s WHERE (CAST('{\"a\":1}' AS jsonb)"
        " || jsonb_build_object('context', s.context))"
        " = CAST('{\"a\":1,\"context\":' || s.context::text || '}' AS jsonb)"
    )
    print(f"payloads equal both ways: {same} of {len(rows)}")
    await c.close()


_UPSERT = (
    "INSERT INTO {table} AS r (id, v, c) VALUES ($1, 1, CAST($2 AS jsonb))"
    " ON CONFLICT (id) DO UPDATE SET c = excluded.c, v = r.v + 1"
)
_ONE = (
    "WITH u AS (" + _UPSERT + " RETURNING id, v, c),"
    " h AS (INSERT INTO {history} (id, v, c) SELECT id, v, c FROM u),"
    " e AS (INSERT INTO w_event (c) SELECT c FROM u) SELECT id, v FROM u"
)
_COPIES = (
    "WITH h AS (INSERT INTO w_history (id, v, c) SELECT id, v, c FROM w_packed WHERE id = $1)"
    " INSERT INTO w_event (c) SELECT c FROM w_packed WHERE id = $1"
)
_WAL_AT = "SELECT CAST(pg_current_wal_insert_lsn() - CAST('0/0' AS pg_lsn) AS bigint)"
# Each shape's statements, with whether each takes the context ($2) besides the id ($1).
SHAPES = {
    "as written": [(_ONE.format(table="w_record", history="w_history"), True)],
    "copied": [(_UPSERT.format(table="w_packed") + " RETURNING id, v", True), (_COPIES, False)],
    "uncompressed": [(_ONE.format(table="w_record", history="w_history_ext"), True)],
}


async def shapes(dsn: str, reps: int) -> None:
    c = await asyncpg.connect(dsn)
    await c.execute(_CONTEXTS)
    for table, storage in (
        ("w_record", "EXTERNAL"), ("w_packed", "EXTENDED"), ("w_history", "EXTENDED"),
        ("w_history_ext", "EXTERNAL"), ("w_event", "EXTERNAL"),
    ):  # fmt: skip
        key = "n bigserial PRIMARY KEY" if table == "w_event" else "id uuid, v int"
        await c.execute(f"CREATE TABLE {table} ({key}, c jsonb)")
        await c.execute(f"ALTER TABLE {table} ALTER COLUMN c SET STORAGE {storage}")
    await c.execute("ALTER TABLE w_record ADD PRIMARY KEY (id)")
    await c.execute("ALTER TABLE w_packed ADD PRIMARY KEY (id)")
    texts = [r["t"] for r in await c.fetch("SELECT context::text AS t FROM src ORDER BY id")]
    pid = c.get_server_pid()
    keys = {name: [uuid.uuid4() for _ in texts] for name in SHAPES}
    wall: dict[str, list[float]] = {k: [] for k in SHAPES}
    cpu: dict[str, float] = dict.fromkeys(SHAPES, 0.0)
    wal: dict[str, list[int]] = {k: [] for k in SHAPES}
    for rep in range(reps):
        for n, context in enumerate(texts):
            order = list(SHAPES) if (rep + n) % 2 == 0 else list(reversed(SHAPES))
            for name in order:
                before = await c.fetchval(_WAL_AT)
                used, started = scheduled_s(pid), time.perf_counter()
                async with c.transaction():
                    for statement, with_context in SHAPES[name]:
                        key = keys[name][n]
                        await c.fetch(statement, *((key, context) if with_context else (key,)))
                wall[name].append((time.perf_counter() - started) * 1000)
                cpu[name] += scheduled_s(pid) - used
                after = await c.fetchval(_WAL_AT)
                wal[name].append(int(after - before))
    writes = reps * len(texts)
    print(f"{len(texts)} contexts x {reps} rounds, each write + commit its own transaction")
    print("| shape | wall p50 ms | server CPU ms per write | WAL KB p50 |")
    print("|---|---:|---:|---:|")
    for name in SHAPES:
        ms, cpu_ms = statistics.median(wall[name]), cpu[name] * 1000 / writes
        print(f"| {name} | {ms:.3f} | {cpu_ms:.2f} | {statistics.median(wal[name]) / 1024:.1f} |")
    await c.close()


def main() -> None:
    sys.argv = sys.argv[:1]  # write_phase parses its own arguments on import
    import write_phase
    from perf import trigger_events
    from perfbench import corpus as corpus_module, load

    corpus = corpus_module.load_or_build(
        10_000, write_phase.CACHE, REPO / ".cairn" / "models", unique_texts=10_000
    )
    events = trigger_events(corpus, 60)
    with load.services(write_phase.CACHE / "run-write-copies") as services:
        asyncio.run(load.load(corpus, services.database_url, services.postgres.dsn))
        asyncio.run(write_phase._writes(services.database_url, events))
        measure = shapes if ARGS.shapes else experiment
        asyncio.run(measure(services.postgres.dsn, ARGS.reps))


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--reps", type=int, default=3)
parser.add_argument("--shapes", action="store_true", help="the whole write, in three shapes")
ARGS = parser.parse_args()

if __name__ == "__main__":
    main()
