"""Row-level security and Cairn's GIN indexes (cairn.db.leakproof): the migration marks the
array and text-search operators leakproof, so a tenant's tag, pointer and lexeme lookups go
through their indexes instead of reading every record of the tenant; the policy still
decides which rows come back."""

from __future__ import annotations

import uuid

from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection
from tests.dbcheck import plan_nodes

from cairn.context.sources.session import session_query
from cairn.db.leakproof import FUNCTIONS, unmarked
from cairn.db.roles import DEFAULT_APP_ROLE


async def _session_lookup_indexes(connection: AsyncConnection, owner: uuid.UUID) -> set[str]:
    """The indexes the session source's query uses, planned as the application role for
    ``owner``."""
    query = session_query(owner, ["session:s7"], 8, frozenset(), uuid.uuid4())
    assert not isinstance(query, list) and hasattr(query, "sql")
    await connection.execute(text(f'SET LOCAL ROLE "{DEFAULT_APP_ROLE}"'))
    await connection.execute(
        text("SELECT set_config('cairn.tenant', :tenant, true)"), {"tenant": str(owner)}
    )
    explained = await connection.execute(text(f"EXPLAIN (FORMAT JSON) {query.sql}"), query.params)
    await connection.execute(text("RESET ROLE"))
    plan = explained.scalar_one()[0]["Plan"]
    return {node["Index Name"] for _, node in plan_nodes(plan) if "Index Name" in node}


async def test_the_migration_marks_the_index_operators_leakproof(app: FastAPI) -> None:
    system = app.state.resources.system_engine
    assert system is not None
    assert await unmarked(system) == []


async def test_a_session_lookup_under_row_level_security_uses_the_tags_index(
    app: FastAPI,
) -> None:
    resources = app.state.resources
    owner = uuid.uuid4()
    async with (
        resources.system_engine.connect() as connection,
        connection.begin() as transaction,
    ):
        # A tenant of 5,000 records in 500 sessions, and the planner told so (all undone
        # with the transaction).
        await connection.execute(
            text("INSERT INTO tenants (id, name) VALUES (:id, 'leakproof')"), {"id": owner}
        )
        await connection.execute(
            text(
                "INSERT INTO breadcrumbs (id, owner_id, title, tags, context, checksum,"
                " size_bytes) SELECT gen_random_uuid(), :owner, 'turn ' || n,"
                " ARRAY['session:s' || n % 500], '{}', 'x', 2"
                " FROM generate_series(1, 5000) AS n"
            ),
            {"owner": owner},
        )
        await connection.execute(text("ANALYZE breadcrumbs"))
        used = await _session_lookup_indexes(connection, owner)
        assert "ix_breadcrumbs_tags" in used, used
        # Without the mark (undone with the transaction) the policy keeps `&&` from
        # the index: the query reads the tenant's records through another one.
        for function in FUNCTIONS:
            await connection.exec_driver_sql(f"ALTER FUNCTION {function} NOT LEAKPROOF")
        unmarked_plan = await _session_lookup_indexes(connection, owner)
        assert "ix_breadcrumbs_tags" not in unmarked_plan, unmarked_plan
        await transaction.rollback()
    assert await unmarked(resources.system_engine) == []
