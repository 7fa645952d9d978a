"""Every route is gated: the table below names each route's role, the app's routes must be
exactly the table's (a new route fails here until it is given a gate), and each gate holds
over HTTP: no token 401, a token without the role 403, a token with it passes the gate."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Route
from tests.auth.conftest import Mint, bearer

from cairn.api.app import ROUTERS
from cairn.principal import Role
from cairn.webhooks.endpoints import agent_or_curator

OPEN = "open"  # no authentication at all
CREDENTIAL = "credential"  # checks its own credential (admin or curator)
OWN_AGENT = "own agent"  # any role, for the agent itself; curators for any agent
S, E, C = Role.SUBSCRIBER, Role.EMITTER, Role.CURATOR

EXPECTED: dict[tuple[str, str], Role | str] = {
    ("GET", "/health"): OPEN,
    ("GET", "/ready"): OPEN,
    ("GET", "/metrics"): OPEN,
    ("GET", "/workers"): OPEN,
    ("POST", "/auth/token"): CREDENTIAL,
    ("GET", "/tenants"): C,
    ("GET", "/tenants/{tenant_id}"): C,
    ("POST", "/tenants/{tenant_id}"): C,
    ("PUT", "/tenants/{tenant_id}"): C,
    ("GET", "/agents"): C,
    ("GET", "/agents/{agent_id}"): C,
    ("POST", "/agents/{agent_id}"): C,
    ("DELETE", "/agents/{agent_id}"): C,
    ("POST", "/breadcrumbs"): E,
    ("GET", "/breadcrumbs"): S,
    ("GET", "/breadcrumbs/search"): S,
    ("POST", "/breadcrumbs/render"): S,
    ("POST", "/breadcrumbs/batch"): E,
    ("GET", "/breadcrumbs/{breadcrumb_id}"): S,
    ("GET", "/breadcrumbs/{breadcrumb_id}/full"): S,
    ("GET", "/breadcrumbs/{breadcrumb_id}/history"): S,
    ("PATCH", "/breadcrumbs/{breadcrumb_id}"): E,
    ("DELETE", "/breadcrumbs/{breadcrumb_id}"): E,
    ("POST", "/breadcrumbs/{breadcrumb_id}/tags/add"): E,
    ("POST", "/breadcrumbs/{breadcrumb_id}/tags/remove"): E,
    ("POST", "/breadcrumbs/{breadcrumb_id}/context/merge"): E,
    ("POST", "/breadcrumbs/{breadcrumb_id}/approve"): C,
    ("POST", "/breadcrumbs/{breadcrumb_id}/reject"): C,
    ("GET", "/events/stream"): S,
    ("POST", "/agents/{agent_id}/webhooks"): OWN_AGENT,
    ("GET", "/agents/{agent_id}/webhooks"): OWN_AGENT,
    ("DELETE", "/agents/{agent_id}/webhooks/{webhook_id}"): OWN_AGENT,
    ("POST", "/agents/{agent_id}/secret"): OWN_AGENT,
    ("GET", "/dlq"): C,
    ("DELETE", "/dlq/{entry_id}"): C,
    ("POST", "/dlq/{entry_id}/retry"): C,
    ("GET", "/worker/dead"): C,
    ("DELETE", "/worker/dead/{entry_id}"): C,
    ("GET", "/coverage"): C,
    ("GET", "/reindex"): C,
    ("GET", "/contexts/{consumer_id}"): S,
    ("GET", "/contexts/{agent_id}/debug"): S,
    ("POST", "/contexts/assemble"): E,
    # Subscribers with an inline agent; a registered agent's own context needs the agent
    # itself (emitter) or a curator, checked in the route (tests/assembly/test_ondemand.py).
    ("POST", "/contexts/query"): S,
    # Like the other operational logs: an entry names any agent's queries and selections.
    ("GET", "/assemblies"): C,
    ("GET", "/assemblies/stats"): C,
    ("GET", "/acl"): C,
    ("POST", "/acl/grant"): C,
    ("POST", "/acl/revoke"): C,
    ("DELETE", "/acl/{acl_id}"): C,
    ("GET", "/breadcrumbs/{breadcrumb_id}/acl"): C,
    ("POST", "/breadcrumbs/{breadcrumb_id}/acl"): C,
    ("DELETE", "/breadcrumbs/{breadcrumb_id}/acl/{acl_id}"): C,
    ("POST", "/secrets"): C,
    ("GET", "/secrets"): S,
    ("GET", "/secrets/{secret_id}"): S,
    ("PUT", "/secrets/{secret_id}"): C,
    ("DELETE", "/secrets/{secret_id}"): C,
    ("POST", "/secrets/{secret_id}/decrypt"): S,
    ("GET", "/secrets/{secret_id}/audit"): C,
    ("GET", "/paths"): S,
    ("GET", "/paths/active"): S,
    ("GET", "/paths/{path_id}"): S,
    ("POST", "/paths"): E,
    ("POST", "/paths/{path_id}/resolve"): E,
    ("POST", "/paths/{path_id}/abandon"): E,
    ("GET", "/graph"): S,
    ("GET", "/breadcrumbs/{breadcrumb_id}/edges"): S,
    ("GET", "/breadcrumbs/{breadcrumb_id}/processing"): S,
}
# Routes outside the API's routers (not in the OpenAPI schema), with their gate.
DOCS = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
OUTSIDE_ROUTERS: dict[str, str] = {
    # Every request needs a token (tests/auth/test_mcp_auth.py); each tool checks the role
    # of its API route (remember: emitter, the others: subscriber).
    "/mcp": "token, then per tool",
}
# Served to anyone: the console's page holds no data (its scripts call the gated routes
# with the visitor's token); its assets are a static mount under /console/.
PUBLIC_OUTSIDE = {"/": "the console page"}
GATED = sorted(key for key, gate in EXPECTED.items() if gate != OPEN)
BELOW = {S: [], E: [["subscriber"]], C: [["subscriber"], ["emitter"], ["subscriber", "emitter"]]}


def _routes() -> dict[tuple[str, str], tuple[APIRoute, list[Any]]]:
    found = {}
    for router in ROUTERS:
        for route in router.routes:
            assert isinstance(route, APIRoute)
            for method in route.methods:
                found[(method, route.path)] = (route, list(router.dependencies))
    return found


def _gates(route: APIRoute, router_dependencies: list[Any]) -> set[object]:
    """The role gates and own-agent checks among a route's dependencies, at any depth."""
    calls = [dependency.dependency for dependency in router_dependencies]
    pending = list(route.dependant.dependencies)
    while pending:
        dependant = pending.pop()
        calls.append(dependant.call)
        pending.extend(dependant.dependencies)
    gates: set[object] = {getattr(call, "required_role", None) for call in calls}
    if agent_or_curator in calls:
        gates.add(OWN_AGENT)
    return gates - {None}


def test_the_table_names_every_route_of_the_app(jwt_app: FastAPI) -> None:
    schema = jwt_app.openapi()["paths"]
    served = {(method.upper(), path) for path, item in schema.items() for method in item}
    assert served == set(EXPECTED), "give new routes a gate (and a row here)"
    assert set(_routes()) == set(EXPECTED)


def test_the_routes_outside_the_routers_are_known(jwt_app: FastAPI) -> None:
    plain = {route.path for route in jwt_app.routes if isinstance(route, Route)}
    outside = {path for path in plain if path not in DOCS} - {p for _, p in EXPECTED}
    assert outside == set(OUTSIDE_ROUTERS) | set(PUBLIC_OUTSIDE), "give new routes a gate"


async def test_the_console_is_served_without_a_token_and_its_data_is_not(
    jwt_client: httpx.AsyncClient,
) -> None:
    page = await jwt_client.get("/")
    assert page.status_code == 200, page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert (await jwt_client.get("/console/js/app.js")).status_code == 200
    assert (await jwt_client.get("/breadcrumbs")).status_code == 401


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
@pytest.mark.parametrize("path", sorted(OUTSIDE_ROUTERS))
async def test_routes_outside_the_routers_need_a_token(
    jwt_client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await jwt_client.request(method, path, json={})
    assert response.status_code == 401, response.text
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path"), sorted(EXPECTED))
def test_each_route_carries_the_gate_of_the_table(method: str, path: str) -> None:
    route, router_dependencies = _routes()[(method, path)]
    expected = EXPECTED[(method, path)]
    gates = _gates(route, router_dependencies)
    if expected in (OPEN, CREDENTIAL):
        assert gates == set()
    else:
        assert expected in gates, gates


def _url(path: str, owner: uuid.UUID, agent: str) -> str:
    values = {"tenant_id": str(owner), "agent_id": agent, "consumer_id": agent}
    for name in ("breadcrumb_id", "webhook_id", "entry_id", "acl_id", "secret_id", "path_id"):
        values[name] = str(uuid.uuid4())
    return path.format(**values)


async def _call(
    client: httpx.AsyncClient, method: str, path: str, token: str | None, **ids: Any
) -> httpx.Response:
    url = _url(path, ids.get("owner", uuid.uuid4()), ids.get("agent", "someone-else"))
    headers = bearer(token) if token else {}
    body = {"agent_id": "probe"} if path == "/auth/token" else {}
    if method in {"POST", "PUT", "PATCH"}:
        return await client.request(method, url, json=body, headers=headers)
    return await client.request(method, url, headers=headers)


@pytest.mark.parametrize(("method", "path"), GATED)
async def test_no_token_gets_401(jwt_client: httpx.AsyncClient, method: str, path: str) -> None:
    response = await _call(jwt_client, method, path, None)
    assert response.status_code == 401, response.text
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path"), [k for k in GATED if isinstance(EXPECTED[k], Role)])
async def test_a_token_without_the_role_gets_403(
    jwt_client: httpx.AsyncClient, mint: Mint, method: str, path: str
) -> None:
    role = EXPECTED[(method, path)]
    assert isinstance(role, Role)
    owner = uuid.uuid4()
    for roles in BELOW[role]:
        agent = f"agent-{uuid.uuid4().hex[:8]}"
        token = mint(owner_id=owner, sub=agent, roles=roles)
        response = await _call(jwt_client, method, path, token, owner=owner, agent=agent)
        assert response.status_code == 403, (roles, response.text)


@pytest.mark.parametrize(
    ("method", "path"),
    [k for k in GATED if isinstance(EXPECTED[k], Role) and k != ("GET", "/events/stream")],
)
async def test_a_token_with_the_role_passes_the_gate(
    jwt_client: httpx.AsyncClient, mint: Mint, method: str, path: str
) -> None:
    role = EXPECTED[(method, path)]
    assert isinstance(role, Role)
    owner, agent = uuid.uuid4(), f"agent-{uuid.uuid4().hex[:8]}"
    token = mint(owner_id=owner, sub=agent, roles=[role.value])
    response = await _call(jwt_client, method, path, token, owner=owner, agent=agent)
    assert response.status_code not in (401, 403), response.text
    assert response.status_code < 500


@pytest.mark.parametrize(("method", "path"), [k for k in GATED if EXPECTED[k] == OWN_AGENT])
async def test_own_agent_routes_admit_the_agent_and_curators_only(
    jwt_client: httpx.AsyncClient, mint: Mint, method: str, path: str
) -> None:
    owner, agent = uuid.uuid4(), f"agent-{uuid.uuid4().hex[:8]}"
    itself = mint(owner_id=owner, sub=agent, roles=["subscriber"])
    other = mint(owner_id=owner, roles=["emitter"])
    curator = mint(owner_id=owner, roles=["curator"])
    for token, allowed in ((itself, True), (other, False), (curator, True)):
        response = await _call(jwt_client, method, path, token, owner=owner, agent=agent)
        assert (response.status_code != 403) is allowed, response.text
        assert response.status_code != 401 and response.status_code < 500
