"""The seed sources, listed once, in rank order.

A source's place here is its tie-break rank: between two paths of equal cost, the one
starting from the earlier source wins, and a record seeded by two sources keeps the
earlier source's seed (the later is reported as a duplicate). Adding a source is one
module with a ``SOURCE`` that keeps :class:`SeedSourceKind`, its line here, and its
``context_sources.<name>`` entry in ``schemas/agent.def.v1.json``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from asyncpg.pgproto.pgproto import UUID as DriverUUID
from sqlalchemy import JSON, text

from cairn.context.model import Seed
from cairn.context.sources import always, paths, semantic, session, signals, trigger
from cairn.context.sources.base import (
    Along,
    Rows,
    SeedBatch,
    SeedCost,
    SeedQuery,
    SeedRequest,
    SeedSourceKind,
    namespaced,
    run_alone,
)
from cairn.db.driver import DriverQuery

SOURCES: tuple[SeedSourceKind, ...] = (
    trigger.SOURCE,
    always.SOURCE,
    semantic.SOURCE,
    signals.SOURCE,
    session.SOURCE,
    paths.SOURCE,
)

RANK: Mapping[str, int] = {source.name: rank for rank, source in enumerate(SOURCES)}
NAMES: tuple[str, ...] = tuple(source.name for source in SOURCES)
_COSTS: Mapping[str, SeedCost] = {source.name: source.cost for source in SOURCES}


def rank_of(name: str) -> int:
    try:
        return RANK[name]
    except KeyError:
        raise ValueError(f"unknown seed source {name!r}; the sources are {NAMES}") from None


def seed_cost(seed: Seed) -> float:
    """Where the search starts from ``seed``: its source's base plus span * (1 - score)."""
    rank_of(seed.source)
    return _COSTS[seed.source].of(seed.score)


async def gather(request: SeedRequest, along: Along | None = None) -> list[SeedBatch]:
    """Every source's batch, in rank order, from ONE statement: a column per source that
    has a query, holding its rows as JSON (the seed stage's only round trip, once the
    owner's common words are cached); ``along``, a later stage's query, rides in it."""
    planned = [await source.query(request) for source in SOURCES]
    queries: list[tuple[str, SeedQuery | Along]] = [
        (f"s{n}", query) for n, query in enumerate(planned) if isinstance(query, SeedQuery)
    ]
    riding = along if queries else None  # with no statement of its own, nothing to ride
    if riding is not None:
        queries.append(("along", riding))
    if len(queries) <= 1:
        return [await run_alone(request.session, query) for query in planned]
    parts: list[tuple[str, str]] = []
    params: dict[str, Any] = {}
    for name, query in queries:
        sql, named = namespaced(query, f"{name}_")
        parts.append((name, sql))
        params |= named
    (row,) = await _statement(tuple(parts)).fetch(request.session, params)
    if riding is not None:
        riding.read(row["along"])
    return [
        query.read(_with_ids(row[f"s{n}"], query.ids)) if isinstance(query, SeedQuery) else query
        for n, query in enumerate(planned)
    ]


@functools.lru_cache(maxsize=1024)
def _statement(parts: tuple[tuple[str, str], ...]) -> DriverQuery:
    """The seed stage's statement: a column per (name, query), the query's rows as JSON.
    Parsed and compiled once per text (``text()`` scans it for parameters): an agent's
    sources make the same text in every assembly."""
    columns = ", ".join(
        f"(SELECT coalesce(json_agg(q), CAST('[]' AS json)) FROM ({sql}) AS q) AS {name}"
        for name, sql in parts
    )
    return DriverQuery(text(f"SELECT {columns}").columns(**{name: JSON for name, _ in parts}))


def _with_ids(rows: Rows, ids: tuple[str, ...]) -> Rows:
    """JSON rows with their record ids as UUIDs again: the driver's own UUID type, like
    every id the later stages read from the database. A ``uuid.UUID`` would work as well,
    but mixed with the driver's ids it makes every dict lookup and comparison of the graph
    walk and the pathfinder take Python's slow path (~8x per lookup)."""
    for row in rows:
        for column in ids:
            row[column] = DriverUUID(row[column])
    return rows


__all__ = [
    "NAMES",
    "RANK",
    "SOURCES",
    "Along",
    "SeedBatch",
    "SeedCost",
    "SeedQuery",
    "SeedRequest",
    "SeedSourceKind",
    "gather",
    "rank_of",
    "seed_cost",
]
