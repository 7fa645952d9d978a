"""The operators row-level security must let through to Cairn's GIN indexes.

Under row-level security PostgreSQL checks a query's own conditions after the policy's,
unless every function in them is ``LEAKPROOF`` (it could otherwise show a hidden row's
value, in an error say); and only a condition it may check first can be an index
condition. PostgreSQL marks the equality and ordering of plain types leakproof, not the
array and text-search operators Cairn's GIN indexes answer: ``&&``, ``@>`` and ``<@`` on
tags, keyword pointers and domain labels, ``@@`` on lexemes. Without the mark each such
condition reads the tenant's records one by one: the session seed source scanned all
100,000 records of the benchmark tenant (106 of an assembly's 165 ms), the word
nominations the whole searched subset (benchmarks/results/rls.md).

For Cairn's columns (``text[]``, ``tsvector``) the four functions are leakproof: they
compare text arrays element by element with text equality, itself leakproof, or match a
lexeme list against the query's own ``tsquery``; no error they raise depends on a row's
value and none has a side effect. Only a superuser may mark a function; ``cairn migrate``
does, on every run, when it logs in as one (the embedded server, the compose file's
``cairn`` role), in Cairn's database only. Elsewhere (a managed server without a
superuser) ``cairn serve`` logs which functions lack the mark: assemblies stay correct,
just slower.
"""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

FUNCTIONS = (
    "pg_catalog.arrayoverlap(anyarray, anyarray)",  # &&
    "pg_catalog.arraycontains(anyarray, anyarray)",  # @>
    "pg_catalog.arraycontained(anyarray, anyarray)",  # <@
    "pg_catalog.ts_match_vq(tsvector, tsquery)",  # @@
)
_UNMARKED = text(
    "SELECT CAST(CAST(f AS regprocedure) AS text) FROM unnest(CAST(:functions AS text[])) AS f"
    " JOIN pg_proc p ON p.oid = CAST(f AS regprocedure) WHERE NOT p.proleakproof ORDER BY 1"
)


def mark(connection: Connection) -> None:
    """Mark those of :data:`FUNCTIONS` not yet leakproof when ``connection`` logs in as a
    superuser (otherwise nothing changes: ``warn_if_unmarked`` tells)."""
    superuser = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
    if connection.execute(text(superuser)).scalar():
        for (function,) in connection.execute(_UNMARKED, {"functions": list(FUNCTIONS)}):
            connection.exec_driver_sql(f"ALTER FUNCTION {function} LEAKPROOF")


async def unmarked(engine: AsyncEngine) -> list[str]:
    """The functions of :data:`FUNCTIONS` not leakproof in ``engine``'s database."""
    async with engine.connect() as connection:
        rows = await connection.execute(_UNMARKED, {"functions": list(FUNCTIONS)})
        return [row[0] for row in rows]


async def warn_if_unmarked(engine: AsyncEngine) -> list[str]:
    """Log which functions row-level security keeps from the indexes, and what to do."""
    missing = await unmarked(engine)
    if missing:
        log.warning(
            "under row-level security PostgreSQL cannot use Cairn's GIN indexes for %s "
            "(not LEAKPROOF): session and keyword lookups read every record of a tenant. "
            "Run `cairn migrate` with CAIRN_ADMIN_DATABASE_URL logging in as a superuser, "
            "or have one run ALTER FUNCTION ... LEAKPROOF for each (docs/operations.md)",
            ", ".join(missing),
        )
    return missing
