"""The graph walked in memory (context.graph_memory) answers as the SQL walk does, on
random graphs in the real database, and stays current with writes made elsewhere."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import text
from tests import sent
from tests.assembly.helpers import insert_quietly, session_agent

from cairn.breadcrumbs.repository import insert_breadcrumb
from cairn.context.graph import load_graph
from cairn.context.graph_memory import GraphMemory
from cairn.context.model import EdgeType, Graph
from cairn.context.records import RecordCache
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.edges.repository import upsert_edges

SCHEMAS = ("a.v1", "b.v1")
TAGS = ("session:s1", "session:s2", "topic:x")
DOMAINS = ("d1", "d2")
WEIGHTS = (0.3, 0.6, 0.6, 1.0)  # repeated weights: ties the order must break alike


@dataclass
class World:
    owner: uuid.UUID
    nodes: list[uuid.UUID]


async def _tenant(app: FastAPI) -> uuid.UUID:
    owner = uuid.uuid4()
    await ensure_tenant(app.state.resources.engine, owner, f"graph-{owner}")
    return owner


Spec = tuple[str, list[str], list[str]]
Link = tuple[uuid.UUID, uuid.UUID, int, float]


async def _records(app: FastAPI, owner: uuid.UUID, specs: Sequence[Spec]) -> list[uuid.UUID]:
    ids = [uuid.uuid4() for _ in specs]
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        for record_id, (schema, tags, domains) in zip(ids, specs, strict=True):
            await insert_breadcrumb(
                session,
                {
                    "id": record_id, "owner_id": owner, "schema_name": schema, "title": "n",
                    "tags": tags, "context": {}, "checksum": "sha256:test", "size_bytes": 0,
                    "domains": domains,
                },
            )  # fmt: skip
    return ids


async def _link(app: FastAPI, owner: uuid.UUID, edges: Sequence[Link]) -> None:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, sorted(edges))


async def _sql(app: FastAPI, owner: uuid.UUID, statement: str, **params: Any) -> None:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await session.execute(text(statement), params)


async def _walk(
    app: FastAPI,
    owner: uuid.UUID,
    seeds: list[uuid.UUID],
    memory: GraphMemory | None,
    *,
    along: bool = False,
    **kw: Any,
) -> Graph:
    """The walk, in a transaction of its own; ``along``: the memory's change-log query is
    first sent as the seed stage sends it (rows as JSON), in an earlier statement."""
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        asked = None if memory is None or not along else memory.along(owner)
        if asked is not None:
            statement = text(f"SELECT json_agg(q) FROM ({asked.sql}) AS q")
            asked.read((await session.execute(statement, dict(asked.params))).scalar_one())
        excluded = kw.pop("excluded", frozenset())
        return await load_graph(session, owner, seeds, excluded, memory=memory, **kw)


def _shape(graph: Graph) -> tuple[set[uuid.UUID], set[tuple[Any, ...]], tuple[uuid.UUID, ...]]:
    return set(graph.records), set(graph.edges), graph.isolated


async def _same(
    app: FastAPI, world: World, memory: GraphMemory, query: dict[str, Any], *, along: bool = False
) -> None:
    seeds = [world.nodes[i] for i in query["seeds"]]
    kw = dict(query["kw"])
    if "quiet" in kw:
        kw["quiet"] = world.nodes[kw["quiet"]]
    if kw.get("max_candidates") is not None:
        kw["seed_costs"] = {seed: cost for seed, cost in zip(seeds, query["costs"], strict=False)}
    by_sql = await _walk(app, world.owner, seeds, None, **dict(kw))
    in_memory = await _walk(app, world.owner, seeds, memory, along=along, **dict(kw))
    assert _shape(in_memory) == _shape(by_sql), (query, world.nodes)
    # With a record cache the records' statement goes out before the edges are found.
    cached = await _walk(app, world.owner, seeds, memory, cache=RecordCache(64), **dict(kw))
    assert _shape(cached) == _shape(by_sql), (query, world.nodes)
    assert cached.records == by_sql.records


NODE = st.tuples(
    st.sampled_from(SCHEMAS),
    st.lists(st.sampled_from(TAGS), unique=True, max_size=2),
    st.lists(st.sampled_from(DOMAINS), unique=True, max_size=2),
)


@st.composite
def _queries(draw: st.DrawFn, size: int) -> dict[str, Any]:
    seeds = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3, unique=True))
    kw: dict[str, Any] = {
        "radius": draw(st.integers(1, 2)),
        "fanout": draw(st.integers(1, 3)),
        "max_candidates": draw(st.one_of(st.none(), st.integers(1, 6))),
        "excluded": draw(st.sampled_from([frozenset(), frozenset({"b.v1"})])),
        "isolated": draw(st.sampled_from([frozenset(), frozenset({"d1"})])),
    }
    if draw(st.booleans()):
        kw["scope"] = ["session:s1"]
    if draw(st.booleans()):
        kw["quiet"] = seeds[0]
    costs = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5]), min_size=3, max_size=3))
    return {"seeds": seeds, "kw": kw, "costs": costs}


@st.composite
def _worlds(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(st.lists(NODE, min_size=2, max_size=8))
    size = len(nodes)
    edge = st.tuples(
        st.integers(0, size - 1), st.integers(0, size - 1), st.integers(0, 3),
        st.sampled_from(WEIGHTS),
    )  # fmt: skip
    edges = draw(st.lists(edge, min_size=size, max_size=30, unique_by=lambda e: e[:3]))
    removed = draw(st.lists(st.sampled_from(edges), max_size=5)) if edges else []
    added = draw(st.lists(edge, max_size=8, unique_by=lambda e: e[:3]))
    queries = draw(st.lists(_queries(size), min_size=1, max_size=3))
    retag = draw(st.tuples(st.integers(0, size - 1), NODE))
    return {"nodes": nodes, "edges": edges, "removed": removed, "added": added,
            "queries": queries, "retag": retag}  # fmt: skip


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=_worlds())
async def test_memory_walks_equal_the_sql_walks_before_and_after_changes(
    app: FastAPI, spec: dict[str, Any]
) -> None:
    """Random graphs with tied weights, every filter and cap; then edges removed and added
    and a record's schema, tags and domains changed by other writers: the memory, caught up
    from the change log without loading again (the first time from the answer asked along
    an earlier statement, as in an assembly), still answers as SQL does."""
    owner = await _tenant(app)
    world = World(owner, await _records(app, owner, spec["nodes"]))
    n = world.nodes
    await _link(app, owner, [(n[a], n[b], t, w) for a, b, t, w in spec["edges"]])
    memory = GraphMemory()
    for query in spec["queries"]:
        await _same(app, world, memory, query)
    for a, b, t, _ in spec["removed"]:
        await _sql(app, owner, "DELETE FROM breadcrumb_edges WHERE from_id = :a AND to_id = :b"
                   " AND edge_type = :t", a=n[a], b=n[b], t=t)  # fmt: skip
    await _link(app, owner, [(n[a], n[b], t, w) for a, b, t, w in spec["added"]])
    node, (schema, tags, domains) = spec["retag"]
    await _sql(app, owner, "UPDATE breadcrumbs SET schema_name = :s, tags = :t, domains = :d"
               " WHERE id = :id", s=schema, t=tags, d=domains, id=n[node])  # fmt: skip
    for n, query in enumerate(spec["queries"]):
        await _same(app, world, memory, query, along=n == 0)
    assert memory.loads == 1 and memory.caught_up_along == 1


async def test_a_deleted_record_and_its_edges_disappear_from_the_memory(app: FastAPI) -> None:
    owner = await _tenant(app)
    a, b, c = await _records(app, owner, [("a.v1", [], [])] * 3)
    await _link(app, owner, [(a, b, 0, 1.0), (b, c, 0, 1.0)])
    memory = GraphMemory()
    assert set((await _walk(app, owner, [a], memory)).records) == {a, b, c}
    await _sql(app, owner, "DELETE FROM breadcrumbs WHERE id = :id", id=b)
    graph = await _walk(app, owner, [a], memory)
    assert set(graph.records) == {a} and not graph.edges
    assert memory.loads == 1


async def test_an_edge_written_by_another_process_is_walked_next_time(app: FastAPI) -> None:
    """Another writer's committed edge, and one from a transaction that began before the
    memory last looked but committed after: both are walked by the next assembly."""
    owner = await _tenant(app)
    a, b, c = await _records(app, owner, [("a.v1", [], [])] * 3)
    memory = GraphMemory()
    assert set((await _walk(app, owner, [a], memory)).records) == {a}
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as slow, slow.begin():
        await upsert_edges(slow, owner, [(a, c, 3, 0.9)])  # not committed yet
        await _link(app, owner, [(a, b, 0, 1.0)])
        assert set((await _walk(app, owner, [a], memory)).records) == {a, b}
    assert set((await _walk(app, owner, [a], memory)).records) == {a, b, c}
    assert memory.loads == 1


async def test_each_tenant_has_its_own_memory(app: FastAPI) -> None:
    """Seeds of another tenant reach nothing; an edge row stored under another owner (only
    the schema owner could write one) is not followed."""
    mine, theirs = await _tenant(app), await _tenant(app)
    a, b = await _records(app, mine, [("a.v1", [], [])] * 2)
    x, y = await _records(app, theirs, [("a.v1", [], [])] * 2)
    await _link(app, mine, [(a, b, 0, 1.0)])
    await _link(app, theirs, [(x, y, 0, 1.0)])
    resources = app.state.resources
    async with tenant_session(resources.system_sessions, theirs) as session, session.begin():
        await upsert_edges(session, theirs, [(a, y, 0, 1.0)])
    memory = GraphMemory()
    assert set((await _walk(app, mine, [a, x], memory)).records) == {a, b}
    assert set((await _walk(app, theirs, [x, a], memory)).records) == {x, y}
    held = memory.tenants[mine].adjacency
    assert held.node(x) is None and held.node(y) is None


async def test_a_graph_loaded_in_many_pages_is_whole(app: FastAPI, monkeypatch: Any) -> None:
    from cairn.context import graph_memory

    monkeypatch.setattr(graph_memory, "PAGE", 3)
    owner = await _tenant(app)
    nodes = await _records(app, owner, [("a.v1", [], [])] * 8)
    await _link(app, owner, [(a, b, 3, 0.7) for a in nodes[:3] for b in nodes[3:]])
    memory = GraphMemory()
    graph = await _walk(app, owner, [nodes[0]], memory)
    assert set(graph.records) == set(nodes)
    assert memory.tenants[owner].adjacency.edge_count == 15


class _RolledBack(Exception):
    pass


async def test_a_transaction_that_wrote_walks_by_sql(app: FastAPI) -> None:
    """Its own edges are not committed yet and may never be: the memory neither takes them
    nor moves past them; once committed, they are walked from memory."""
    owner = await _tenant(app)
    a, b = await _records(app, owner, [("a.v1", [], [])] * 2)
    memory = GraphMemory()
    assert set((await _walk(app, owner, [a], memory)).records) == {a}
    resources = app.state.resources
    with pytest.raises(_RolledBack):
        async with tenant_session(resources.session_factory, owner) as session, session.begin():
            await upsert_edges(session, owner, [(a, b, 0, 1.0)])
            graph = await load_graph(session, owner, [a], frozenset(), memory=memory)
            assert set(graph.records) == {a, b}  # by SQL, which sees its own write
            raise _RolledBack
    assert set((await _walk(app, owner, [a], memory)).records) == {a}
    await _link(app, owner, [(a, b, 0, 1.0)])
    assert set((await _walk(app, owner, [a], memory)).records) == {a, b}
    assert memory.loads == 1


async def test_with_sessions_of_its_own_the_first_load_runs_apart(app: FastAPI) -> None:
    """As in the worker: the first walk of a tenant goes by SQL while its graph loads."""
    owner = await _tenant(app)
    a, b = await _records(app, owner, [("a.v1", [], [])] * 2)
    await _link(app, owner, [(a, b, 0, 1.0)])
    resources = app.state.resources
    memory = GraphMemory(sessions=resources.session_factory)
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        assert await memory.current(session, owner) is None
    assert set((await _walk(app, owner, [a], memory)).records) == {a, b}
    await memory.loaded(owner)
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        adjacency = await memory.current(session, owner)
    assert adjacency is not None and adjacency.edge_count == 1
    assert set((await _walk(app, owner, [a], memory)).records) == {a, b}
    assert memory.loads == 1


async def test_an_assembly_asks_for_the_changes_in_its_seed_statement(
    app: FastAPI, monkeypatch: Any
) -> None:
    """Once the tenant's graph is held, an assembly sends no query of its own for what
    changed since: it rides in the seed statement, and an edge committed since is walked."""
    resources = app.state.resources
    owner, key = resources.default_tenant, uuid.uuid4().hex[:8]
    agent = session_agent(app, f"along-{key}", key)
    trigger = await insert_quietly(app, "trigger", tags=[f"session:{key}"])
    linked = await insert_quietly(app, f"linked {key}", tags=[f"elsewhere:{key}"])
    builder = resources.contexts
    memory = GraphMemory()
    monkeypatch.setattr(builder, "graphs", memory)
    first = await builder.build(agent, trigger, "first")  # loads the tenant's graph
    assert first is not None and str(linked) not in json.dumps(first["context"])
    await _link(app, owner, [(trigger, linked, EdgeType.causal, 1.0)])
    with sent.by_engine(resources.engine) as statements:
        second = await builder.build(agent, trigger, "second")
    asked = [statement for statement in statements if "graph_changes" in statement]
    assert len(asked) == 1 and "json_agg" in asked[0]  # the seed statement
    assert memory.loads == 1 and memory.caught_up_along == 1
    assert second is not None and str(linked) in json.dumps(second["context"])
