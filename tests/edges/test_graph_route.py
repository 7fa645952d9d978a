"""``GET /graph`` on real records and edges: the bounded walk around a record, an assembled
context's selection with the paths that reached it, and the refusals."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import httpx
import pytest
from cairn_client import AsyncClient
from fastapi import FastAPI
from tests.factories import breadcrumb

from cairn.db.engine import tenant_session
from cairn.edges.repository import upsert_edges
from cairn.edges.view import selected_paths

CAUSAL, TAG, SEMANTIC = 0, 2, 3


async def _post(client: httpx.AsyncClient, **overrides: object) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def _link(
    app: FastAPI, owner: uuid.UUID, edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]]
) -> None:
    resources = app.state.resources
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, edges)


# Unrelated texts and tags of their own: a worker running in the same test session finds
# no edges of its own between them (the tenant is fresh, so nor to anyone else's).
UNRELATED = (
    "Tomatoes ripen faster on the vine in a warm greenhouse",
    "The quarterly tax return is due at the end of April",
    "Jupiter has more than ninety known moons",
    "Tune the violin's strings before the concert",
)


@pytest.fixture
async def chain(client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID) -> list[uuid.UUID]:
    """a -causal-> b -tag-> c -semantic-> d."""
    ids = [
        await _post(
            client,
            title=f"step {n}",
            description=text,
            tags=[f"step-{uuid.uuid4().hex}"],
            context={"text": text},
        )
        for n, text in enumerate(UNRELATED)
    ]
    a, b, c, d = ids
    await _link(app, tenant, [(a, b, CAUSAL, 1.0), (b, c, TAG, 0.5), (c, d, SEMANTIC, 0.8)])
    return ids


async def _graph(client: httpx.AsyncClient, **params: object) -> dict[str, object]:
    response = await client.get("/graph", params=params)
    assert response.status_code == 200, response.text
    answer: dict[str, object] = response.json()
    return answer


@pytest.mark.parametrize(("depth", "reached"), [(1, 2), (2, 3), (3, 4)])
async def test_the_walk_reaches_one_more_record_per_hop(
    client: httpx.AsyncClient, chain: list[uuid.UUID], depth: int, reached: int
) -> None:
    answer = await _graph(client, around=str(chain[0]), depth=depth)
    nodes = answer["nodes"]
    assert isinstance(nodes, list)
    assert [node["id"] for node in nodes] == [str(i) for i in chain[:reached]]
    assert nodes[0]["title"] == "step 0" and nodes[0]["schema_name"] == "note.v1"
    assert answer["truncated"] is False
    kinds = ["causal", "tag", "semantic"][: reached - 1]
    assert [edge["kind"] for edge in answer["edges"]] == kinds  # type: ignore[attr-defined]


async def test_the_walk_goes_both_ways_and_stops_at_the_limit(
    client: httpx.AsyncClient, chain: list[uuid.UUID]
) -> None:
    answer = await _graph(client, around=str(chain[2]), depth=1)
    assert {node["id"] for node in answer["nodes"]} == {str(i) for i in chain[1:]}  # type: ignore[attr-defined]
    cut = await _graph(client, around=str(chain[0]), depth=3, limit=2)
    assert [node["id"] for node in cut["nodes"]] == [str(i) for i in chain[:2]]  # type: ignore[attr-defined]
    assert cut["truncated"] is True
    edge = {"source": str(chain[0]), "target": str(chain[1]), "kind": "causal", "weight": 1.0}
    assert cut["edges"] == [edge]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"around": "not-a-uuid"},
        {"around": str(uuid.uuid4()), "context": str(uuid.uuid4())},
        {"around": str(uuid.uuid4()), "depth": 0},
        {"around": str(uuid.uuid4()), "depth": 4},
        {"around": str(uuid.uuid4()), "limit": 501},
        {"around": str(uuid.uuid4()), "limit": 0},
    ],
)
async def test_bad_parameters_are_a_422(client: httpx.AsyncClient, params: dict[str, str]) -> None:
    assert (await client.get("/graph", params=params)).status_code == 422


async def test_an_unknown_record_or_context_is_a_404(
    client: httpx.AsyncClient, chain: list[uuid.UUID]
) -> None:
    assert (await client.get("/graph", params={"around": str(uuid.uuid4())})).status_code == 404
    # A record that is not an assembled context is no context.
    response = await client.get("/graph", params={"context": str(chain[0])})
    assert response.status_code == 404


async def test_a_context_graph_marks_the_selected_records_and_their_paths(
    client: httpx.AsyncClient, chain: list[uuid.UUID], marker: str
) -> None:
    agent_id = f"graph-{marker[5:]}"
    agent = {
        # Not tagged with its own trigger tag: a running worker would assemble for the
        # definition itself, into the same context record, and this call could read that.
        "schema_name": "agent.def.v1", "title": "graph agent", "tags": ["workspace:agents"],
        "context": {"agent_id": agent_id, "context_trigger": {"any_tags": [marker]}},
    }  # fmt: skip
    assert (await client.post("/breadcrumbs", json=agent)).status_code == 201
    body = {"trigger_id": str(chain[0]), "agent_id": agent_id}
    assembled = await client.post("/contexts/assemble", json=body)
    assert assembled.status_code == 200, assembled.text
    explain = assembled.json()["context"]["explain"]
    selected = {item["record_id"] for item in explain["selected"]}
    assert str(chain[0]) in selected and len(selected) >= 2  # the trigger and its neighbours

    answer = await _graph(client, context=assembled.json()["id"], depth=1)
    nodes = {node["id"]: node for node in answer["nodes"]}  # type: ignore[attr-defined]
    assert {i for i, node in nodes.items() if node["selected"]} == selected
    for item in explain["selected"]:
        path = nodes[item["record_id"]]["path"]
        assert path[-1] == item["record_id"] and len(path) == item["hops"] + 1
        assert item["via"] is None or path[-2] == item["via"]
    assert all(node["path"] is None for node in nodes.values() if not node["selected"])


def test_paths_follow_via_to_the_seed_and_survive_a_malformed_explain() -> None:
    seed, middle, far = (uuid.uuid4() for _ in range(3))
    selected = [
        {"record_id": str(far), "via": str(middle)},
        {"record_id": str(seed), "via": None},
        {"record_id": str(middle), "via": str(seed)},
        {"record_id": "nonsense"},
        "not an item",
    ]
    paths = selected_paths({"explain": {"selected": selected}})
    assert paths == {far: [seed, middle, far], seed: [seed], middle: [seed, middle]}
    assert selected_paths({"explain": {"selected": "none"}}) == {}
    assert selected_paths({"explain": None}) == {}
    assert selected_paths([]) == {}


async def test_the_python_client_reads_the_graph(live_url: str, chain: list[uuid.UUID]) -> None:
    async with AsyncClient(live_url) as cairn:
        graph = await cairn.graph(around=chain[1], depth=1)
    assert [node.id for node in graph.nodes] == [chain[1], chain[0], chain[2]]
    assert {(edge.source, edge.kind) for edge in graph.edges} == {
        (chain[0], "causal"),
        (chain[1], "tag"),
    }


async def test_a_dense_neighbourhood_stops_at_the_limit(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID, marker: str
) -> None:
    """A hub with 150 neighbours, each linked to three more: depth 2 stops at the limit,
    nearest first (every neighbour of the hub before any record two hops out)."""
    records = [breadcrumb(title=f"dense {n}", tags=[marker]) for n in range(150)]
    answer = await client.post("/breadcrumbs/batch", json={"records": records})
    assert answer.status_code == 200, answer.text
    ids = [uuid.UUID(result["id"]) for result in answer.json()["results"]]
    hub, spokes = ids[0], ids[1:]
    edges = [(hub, spoke, TAG, 0.5) for spoke in spokes]
    edges += [(a, b, SEMANTIC, 0.7) for i, a in enumerate(spokes) for b in spokes[i + 1 : i + 4]]
    await _link(app, tenant, edges)

    graph = await _graph(client, around=str(hub), depth=2, limit=60)
    nodes = [uuid.UUID(node["id"]) for node in graph["nodes"]]  # type: ignore[attr-defined]
    assert len(nodes) == 60 and graph["truncated"] is True
    assert nodes[0] == hub and set(nodes) <= set(ids)
    shown = {str(node) for node in nodes}
    links = graph["edges"]
    assert isinstance(links, list) and 0 < len(links) <= 8 * 60
    assert all(edge["source"] in shown and edge["target"] in shown for edge in links)
    whole = await _graph(client, around=str(hub), depth=1, limit=500)
    assert len(whole["nodes"]) == 150 and whole["truncated"] is False  # type: ignore[arg-type]
