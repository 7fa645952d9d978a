"""An assembly sends two of its statements before the work that does not need their
answers (context.graph, context.assemble): whatever that work raises, the statement is
waited for, so the session is never left with a statement running."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import insert_quietly, session_agent

from cairn.context import assemble as assemble_module, graph as graph_module
from cairn.context.graph import load_graph
from cairn.context.graph_memory import GraphMemory
from cairn.context.model import EdgeType
from cairn.context.records import RecordCache
from cairn.db.engine import tenant_session
from cairn.edges.repository import upsert_edges


class Refused(RuntimeError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise Refused("the work beside the statement failed")


async def test_the_records_statement_is_waited_for_when_the_edges_fail(
    app: FastAPI, monkeypatch: Any
) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    a = await insert_quietly(app, "a")
    b = await insert_quietly(app, "b")
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, [(a, b, EdgeType.causal, 1.0)])
    memory, cache = GraphMemory(), RecordCache(100)
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        whole = await load_graph(session, owner, [a], frozenset(), memory=memory, cache=cache)
        assert set(whole.records) == {a, b} and len(whole.edges) == 1
        monkeypatch.setattr(graph_module, "edges_among", _refuse)
        with pytest.raises(Refused):
            await load_graph(session, owner, [a], frozenset(), memory=memory, cache=RecordCache(9))
        # The records' statement ran to its end: the connection takes the next one.
        assert (await session.execute(text("SELECT 1"))).scalar_one() == 1


async def test_the_blocks_statement_is_waited_for_when_the_search_fails(
    app: FastAPI, monkeypatch: Any
) -> None:
    resources, key = app.state.resources, uuid.uuid4().hex[:8]
    agent = session_agent(app, f"overlap-{key}", key)
    await insert_quietly(app, f"earlier {key}", tags=[f"session:{key}"])
    trigger = await insert_quietly(app, f"trigger {key}", tags=[f"session:{key}"])
    builder = resources.contexts
    with monkeypatch.context() as patched:
        patched.setattr(assemble_module, "prepare_search", _refuse)
        with pytest.raises(Refused):  # not the driver's "another operation is in progress"
            await builder.build(agent, trigger, "refused")
    written = await builder.build(agent, trigger, "after")
    assert written is not None and written["context"]["breadcrumb_count"] >= 1
