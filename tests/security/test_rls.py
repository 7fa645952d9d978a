"""Row-level security: the application role sees only the transaction's tenant, even with a
query that has no ``owner_id`` predicate at all."""

from __future__ import annotations

import uuid

import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from tests.factories import breadcrumb

from cairn.api.app import create_app
from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.config import Settings
from cairn.db.engine import set_tenant, tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.errors import ConfigurationError
from cairn.principal import Principal

UNSCOPED = text("SELECT owner_id FROM breadcrumbs")  # deliberately no owner predicate


async def _write(app: FastAPI, owner: uuid.UUID, title: str) -> uuid.UUID:
    resources = app.state.resources
    await ensure_tenant(resources.engine, owner, f"tenant-{owner}")
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        writer = BreadcrumbWriter(
            session, resources.embedder, resources.settings.limits, Principal(owner, "t")
        )
        body = BreadcrumbCreate.model_validate(breadcrumb(title=title))
        return (await writer.create(body, None)).id


async def test_the_application_role_cannot_bypass_row_level_security(app: FastAPI) -> None:
    async with app.state.resources.engine.connect() as connection:
        row = await connection.execute(
            text("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        )
        assert tuple(row.one()) == (False, False)


async def test_every_table_with_an_owner_forces_row_level_security(app: FastAPI) -> None:
    async with app.state.resources.system_engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c"
                " JOIN information_schema.columns col ON col.table_name = c.relname"
                " AND col.table_schema = 'public' AND col.column_name = 'owner_id'"
                " WHERE c.relkind = 'r'"
            )
        )
        tables = {name: (enabled, forced) for name, enabled, forced in rows}
    assert {"breadcrumbs", "outbox", "webhooks", "secrets", "breadcrumb_acl"} <= set(tables)
    assert {name for name, flags in tables.items() if flags != (True, True)} == set()


async def test_an_unscoped_query_sees_only_the_tenant_of_the_transaction(app: FastAPI) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    await _write(app, a, "tenant a")
    await _write(app, b, "tenant b")
    async with app.state.resources.engine.connect() as connection:
        async with connection.begin():
            await set_tenant(connection, a)
            owners = {row[0] for row in await connection.execute(UNSCOPED)}
        assert owners == {a}
        # The next transaction on the same pooled connection: SET LOCAL is gone.
        async with connection.begin():
            assert (await connection.execute(UNSCOPED)).all() == []


async def test_no_tenant_set_means_no_rows(app: FastAPI) -> None:
    await _write(app, uuid.uuid4(), "somebody's record")
    async with app.state.resources.engine.connect() as connection:
        for table in ("breadcrumbs", "breadcrumb_history", "outbox", "tenants", "secrets"):
            assert (await connection.execute(text(f"SELECT * FROM {table}"))).all() == []


async def test_unscoped_writes_cannot_touch_another_tenant(app: FastAPI) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    record = await _write(app, a, "tenant a keeps this")
    await _write(app, b, "tenant b")
    async with app.state.resources.engine.begin() as connection:
        await set_tenant(connection, b)
        await connection.execute(text("UPDATE breadcrumbs SET title = 'stolen'"))
        await connection.execute(text("DELETE FROM breadcrumb_history"))
    async with app.state.resources.system_engine.connect() as connection:
        title = await connection.scalar(
            text("SELECT title FROM breadcrumbs WHERE id = :id"), {"id": record}
        )
        history = await connection.scalar(
            text("SELECT count(*) FROM breadcrumb_history WHERE breadcrumb_id = :id"),
            {"id": record},
        )
    assert title == "tenant a keeps this" and history == 1


async def test_rows_for_another_tenant_cannot_be_written(app: FastAPI) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    await ensure_tenant(app.state.resources.engine, a, f"tenant-{a}")
    with pytest.raises(DBAPIError, match="row-level security"):
        async with app.state.resources.engine.begin() as connection:
            await set_tenant(connection, b)
            await connection.execute(
                text(
                    "INSERT INTO breadcrumbs (id, owner_id, title, context, checksum, size_bytes)"
                    " VALUES (gen_random_uuid(), :owner, 'x', '{}', 'c', 2)"
                ),
                {"owner": a},
            )


async def test_the_application_role_cannot_rewrite_history_of_migrations(app: FastAPI) -> None:
    with pytest.raises(DBAPIError, match="permission denied"):
        async with app.state.resources.engine.begin() as connection:
            await connection.execute(text("DELETE FROM alembic_version"))


async def test_the_secret_audit_trail_is_append_only_for_the_application(app: FastAPI) -> None:
    for statement in ("DELETE FROM secret_audit", "UPDATE secret_audit SET actor = 'x'"):
        with pytest.raises(DBAPIError, match="permission denied"):
            async with app.state.resources.engine.begin() as connection:
                await connection.execute(text(statement))


async def test_a_system_url_bound_by_row_level_security_is_refused(
    app: FastAPI, settings: Settings
) -> None:
    # The outbox relay would see no tenant's events: refuse to start rather than stall.
    bound = settings.model_copy(update={"admin_database_url": settings.database_url})
    other = create_app(bound, embedder=app.state.resources.embedder, migrate=False)
    with pytest.raises(ConfigurationError, match="BYPASSRLS"):
        async with other.router.lifespan_context(other):
            pass


async def test_an_edge_to_a_record_of_another_tenant_is_refused_even_when_granted(
    app: FastAPI,
) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    mine, theirs = await _write(app, a, "a's"), await _write(app, b, "b's, shared with a")
    async with app.state.resources.system_engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO breadcrumb_acl (id, owner_id, breadcrumb_id, grantee_owner_id,"
                " action) VALUES (gen_random_uuid(), :b, :theirs, :a, 'read_full')"
            ),
            {"a": a, "b": b, "theirs": theirs},
        )
    insert = text(
        "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
        " VALUES (:a, :from_id, :to_id, 3, 0.9)"
    )
    async with app.state.resources.engine.begin() as connection:
        await set_tenant(connection, a)
        visible = await connection.scalar(
            text("SELECT count(*) FROM breadcrumbs WHERE id = :id"), {"id": theirs}
        )
        assert visible == 1  # the grant makes it readable...
    with pytest.raises(DBAPIError, match="row-level security"):
        async with app.state.resources.engine.begin() as connection:
            await set_tenant(connection, a)
            await connection.execute(insert, {"a": a, "from_id": mine, "to_id": theirs})
    async with app.state.resources.engine.begin() as connection:  # ...own records link fine
        await set_tenant(connection, a)
        other_mine = await _write(app, a, "a's second")
        await connection.execute(insert, {"a": a, "from_id": mine, "to_id": other_mine})
