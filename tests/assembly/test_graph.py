"""The graph CTE: radius 2, both directions, fan-out caps, owner and blacklist filters."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import insert_quietly, link

from cairn.context.graph import load_graph
from cairn.context.model import Edge, EdgeType, Graph
from cairn.context.pathfinder import DEFAULT_COSTS, CostModel
from cairn.db.engine import tenant_session


async def _graph_ids(
    app: FastAPI, seeds: list[uuid.UUID], excluded: frozenset[str] = frozenset(), **kw: Any
) -> set[uuid.UUID]:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        graph = await load_graph(session, resources.default_tenant, seeds, excluded, **kw)
    return set(graph.records)


async def test_radius_two_in_both_directions(client: httpx.AsyncClient, app: FastAPI) -> None:
    a, b, c, d, e = [await insert_quietly(app, f"n{i}") for i in range(5)]
    # a → b → c → d, and e → a (an incoming edge)
    await link(app, [(a, b, 0, 1.0), (b, c, 1, 1.0), (c, d, 2, 1.0), (e, a, 0, 1.0)])
    assert await _graph_ids(app, [a]) == {a, b, c, e}
    assert await _graph_ids(app, [d]) == {d, c, b}
    assert await _graph_ids(app, [a], radius=1) == {a, b, e}


async def test_fanout_is_capped_strongest_edges_first(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    hub = await insert_quietly(app, "hub")
    leaves = [await insert_quietly(app, f"leaf {i}") for i in range(6)]
    causal, semantic = leaves[:2], leaves[2:]
    await link(app, [(hub, leaf, 0, 1.0) for leaf in causal])
    await link(app, [(hub, leaf, 3, 0.5 + i / 10) for i, leaf in enumerate(semantic)])
    loaded = await _graph_ids(app, [hub], fanout=3)
    assert loaded == {hub, *causal, semantic[-1]}  # causal first, then the most similar


async def test_blacklisted_schemas_are_neither_loaded_nor_walked(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    a = await insert_quietly(app, "a")
    hidden = await insert_quietly(app, "hidden", "secret.v1")
    beyond = await insert_quietly(app, "beyond")
    await link(app, [(a, hidden, 0, 1.0), (hidden, beyond, 0, 1.0)])
    assert await _graph_ids(app, [a], frozenset({"secret.v1"})) == {a}


async def test_edges_of_other_tenants_are_not_followed(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    a, b = await insert_quietly(app, "a"), await insert_quietly(app, "b")
    await link(app, [(a, b, 0, 1.0)], owner=uuid.uuid4())  # an edge recorded under another owner
    assert await _graph_ids(app, [a]) == {a}


async def test_candidates_beyond_the_cap_are_not_loaded(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    seed = await insert_quietly(app, "seed")
    near, far = await insert_quietly(app, "near"), await insert_quietly(app, "far")
    await link(app, [(seed, near, 0, 1.0), (seed, far, 3, 0.3)])  # costs 0.1 and 0.7
    assert await _graph_ids(app, [seed], max_candidates=1) == {seed, near}
    assert await _graph_ids(app, [seed], max_candidates=2) == {seed, near, far}


async def test_the_cap_keeps_the_cheapest_paths_over_two_hops(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    seed, a, b, c = [await insert_quietly(app, f"n{i}") for i in range(4)]
    # seed → a → b by causal edges (0.1 + 0.1); seed → c by a weak semantic edge (0.7)
    await link(app, [(seed, a, 0, 1.0), (a, b, 0, 1.0), (seed, c, 3, 0.3)])
    assert await _graph_ids(app, [seed], max_candidates=2) == {seed, a, b}
    assert await _graph_ids(app, [seed], max_candidates=2, radius=1) == {seed, a, c}


async def test_the_triggers_temporal_edges_are_neither_walked_nor_returned(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    earlier, trigger, answer = [await insert_quietly(app, f"n{i}") for i in range(3)]
    # earlier → trigger is the session's temporal edge; the trigger's causal edge still counts
    await link(app, [(earlier, trigger, 1, 1.0), (trigger, answer, 0, 1.0)])
    for cap in (None, 10):
        graph = await _graph(app, [trigger], max_candidates=cap, quiet=trigger)
        assert set(graph.records) == {trigger, answer}
        plain = await _graph(app, [trigger], max_candidates=cap)
        assert set(plain.records) == {trigger, answer, earlier}
    # Reached another way, the earlier record is loaded, but not linked to the trigger.
    await link(app, [(answer, earlier, 0, 1.0)])
    graph = await _graph(app, [trigger], max_candidates=10, quiet=trigger)
    assert set(graph.records) == {trigger, answer, earlier}
    edges = {(e.from_id, e.to_id) for e in graph.edges}
    assert edges == {(trigger, answer), (answer, earlier)}


async def _graph(app: FastAPI, seeds: list[uuid.UUID], **kw: Any) -> Graph:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        return await load_graph(session, resources.default_tenant, seeds, frozenset(), **kw)


async def test_the_walk_ranks_with_the_pathfinder_edge_costs(app: FastAPI) -> None:
    """The hop query's SQL is generated from the CostModel; PostgreSQL computes the same
    cost as Python for every edge type and weight, default and custom models alike."""
    models = [DEFAULT_COSTS, CostModel(causal=0.7, temporal=0.01, tag=2.5, semantic=0.05)]
    weights = [-0.5, 0.0, 0.3, 0.55, 0.999, 1.0, 1.7]
    resources = app.state.resources
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        for costs in models:
            expression = costs.edge_cost_sql("CAST(:kind AS smallint)", "CAST(:weight AS real)")
            for kind in EdgeType:
                for weight in weights:
                    params = {"kind": kind.value, "weight": weight}
                    in_sql = await session.scalar(text(f"SELECT {expression}"), params)
                    edge = Edge(uuid.uuid4(), uuid.uuid4(), kind, weight)
                    assert in_sql == pytest.approx(costs.edge_cost(edge), abs=1e-6), (
                        costs, kind, weight,
                    )  # fmt: skip


async def test_a_session_scope_keeps_other_sessions_out_of_the_walk(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    """Records of another session are neither loaded nor walked through; records of no
    session (knowledge) and of the trigger's session stay reachable — ranked walk and
    plain walk alike."""
    mine, other = f"session:{uuid.uuid4().hex[:8]}", f"session:{uuid.uuid4().hex[:8]}"
    seed = await insert_quietly(app, "seed", tags=[mine])
    same = await insert_quietly(app, "same session", tags=[mine])
    foreign = await insert_quietly(app, "other session", tags=[other, "topic"])
    beyond = await insert_quietly(app, "only through the other session")
    knowledge = await insert_quietly(app, "knowledge", schema_name="knowledge.v1")
    await link(app, [(seed, same, 3, 0.9), (seed, foreign, 3, 0.95), (foreign, beyond, 0, 1.0)])
    await link(app, [(seed, knowledge, 2, 1.0)])
    for cap in (None, 50):
        kw: dict[str, Any] = {"max_candidates": cap}
        assert await _graph_ids(app, [seed], scope=[mine], **kw) == {seed, same, knowledge}
        assert await _graph_ids(app, [seed], **kw) == {seed, same, foreign, beyond, knowledge}
