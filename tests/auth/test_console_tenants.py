"""The console with CAIRN_AUTH=jwt, in a real headless Chromium: with tenant B's token in
the Token field, nothing of tenant A is on any page — not on the live view, not in the
records list or a search, not on A's record page (404 in place), not among the agents —
while A's own token shows all of it; and a token that may not assemble sees the 403 of
"Assemble again" in place."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, TimeoutError as PlaywrightTimeout
from tests.auth.conftest import Mint, bearer
from tests.browser import Browsing, browser, browsing
from tests.waiting import eventually

__all__ = ["browser", "browsing"]


async def _post(client: httpx.AsyncClient, token: str, **body: Any) -> str:
    body = {"context": {}, **body}
    response = await client.post("/breadcrumbs", json=body, headers=bearer(token))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


@pytest.fixture
async def tenant_a(jwt_client: httpx.AsyncClient, mint: Mint, marker: str) -> dict[str, str]:
    """Tenant A's token, one record with a word found nowhere else, and an agent."""
    tenant = uuid.uuid4()
    token = mint(owner_id=tenant, roles=["curator"])
    word = f"quokka{uuid.uuid4().hex[:8]}"
    record = await _post(
        jwt_client, token, schema_name="note.v1", title=f"A's plan {word}", tags=[marker],
        context={"text": f"the {word} secret plan of tenant A"},
    )  # fmt: skip
    agent_id = f"agent-of-a-{marker[5:]}"
    await _post(
        jwt_client, token, schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [marker]},
        },
    )  # fmt: skip
    return {
        "token": token, "tenant": str(tenant), "record": record, "word": word, "agent": agent_id,
    }  # fmt: skip


async def _sign_in(browsing: Browsing, url: str, token: str) -> None:
    """The token typed into the Token field; the 401 the page got before it is forgotten."""
    page = browsing.page
    await page.goto(f"{url}/#/records")
    await page.wait_for_selector("#records [role=alert]:has-text('401')")
    await page.fill("#token", token)
    await page.click("#token-form button[type=submit]")
    await page.wait_for_selector("#records table, #records p.muted:not(:has-text('loading'))")
    browsing.errors.clear()


async def _records(page: Page, url: str, query: str = "") -> str:
    """The records list (or a search's results) once it has loaded."""
    await page.goto(f"{url}/#/records")
    await page.wait_for_selector("#records table, #records p:not(:has-text('loading'))")
    if query:
        await page.fill("input[name=q]", query)
        await page.click("form.filters button[type=submit]")
        await page.wait_for_selector("#records table, #records p:not(:has-text('loading'))")
    return await page.inner_text("#records")


async def _agents(page: Page, url: str) -> str:
    await page.goto(f"{url}/#/agents")
    await page.wait_for_selector("#agents table, #agents p:not(:has-text('loading'))")
    return await page.inner_text("#agents")


async def _live_until(page: Page, client: httpx.AsyncClient, token: str, marker: str) -> str:
    """Posts records of the token's own tenant until one shows up live (the stream is
    joined and carries what it may), and returns the last one's id."""

    posted: list[str] = []

    async def seen() -> bool:
        posted.append(await _post(client, token, schema_name="note.v1", title="own", tags=[marker]))
        await page.wait_for_selector(f"li[data-id='{posted[-1]}']", timeout=1000)
        return True

    await eventually(seen, timeout=20, tolerate=(PlaywrightTimeout,))
    return posted[-1]


async def test_tenant_b_sees_nothing_of_tenant_a_in_the_console(
    browsing: Browsing,
    jwt_live_url: str,
    jwt_client: httpx.AsyncClient,
    mint: Mint,
    tenant_a: dict[str, str],
    marker: str,
) -> None:
    page = browsing.page
    token_b = mint(owner_id=uuid.uuid4(), roles=["curator"])
    await _sign_in(browsing, jwt_live_url, token_b)

    assert tenant_a["word"] not in await _records(page, jwt_live_url)
    assert "no records" in await _records(page, jwt_live_url, tenant_a["word"])
    assert tenant_a["agent"] not in await _agents(page, jwt_live_url)

    await page.goto(f"{jwt_live_url}/#/records/{tenant_a['record']}")
    alert = await page.wait_for_selector("#record [role=alert]")
    assert "404" in await alert.inner_text()

    await page.goto(f"{jwt_live_url}/#/live")
    await page.wait_for_selector("#live-status[data-state=live]")
    await _live_until(page, jwt_client, token_b, marker)
    of_a = await _post(jwt_client, tenant_a["token"], schema_name="note.v1", title="A, live")
    after = await _live_until(page, jwt_client, token_b, marker)  # B's stream moved past it
    assert await page.locator(f"li[data-id='{after}']").count() == 1
    assert await page.locator(f"li[data-id='{of_a}']").count() == 0
    assert tenant_a["word"] not in await page.inner_text("#events")


async def test_tenant_a_sees_its_own_records_and_agent(
    browsing: Browsing,
    jwt_live_url: str,
    jwt_client: httpx.AsyncClient,
    tenant_a: dict[str, str],
    marker: str,
) -> None:
    page = browsing.page
    await _sign_in(browsing, jwt_live_url, tenant_a["token"])

    assert tenant_a["word"] in await _records(page, jwt_live_url)
    assert tenant_a["word"] in await _records(page, jwt_live_url, tenant_a["word"])
    assert tenant_a["agent"] in await _agents(page, jwt_live_url)

    await page.goto(f"{jwt_live_url}/#/records/{tenant_a['record']}")
    raw = await (await page.wait_for_selector("#raw-context")).inner_text()
    assert tenant_a["word"] in raw

    await page.goto(f"{jwt_live_url}/#/live")
    await page.wait_for_selector("#live-status[data-state=live]")
    await _live_until(page, jwt_client, tenant_a["token"], marker)
    assert browsing.errors == []


async def test_assemble_again_shows_the_403_of_a_token_that_may_not(
    browsing: Browsing,
    jwt_live_url: str,
    jwt_client: httpx.AsyncClient,
    mint: Mint,
    tenant_a: dict[str, str],
    marker: str,
) -> None:
    session = f"s-{marker[5:]}"
    trigger = await _post(
        jwt_client, tenant_a["token"], schema_name="user.message.v1", title="Question",
        tags=[marker, f"session:{session}"], context={"content": f"about {tenant_a['word']}"},
    )  # fmt: skip
    body = {"trigger_id": trigger, "agent_id": tenant_a["agent"]}
    response = await jwt_client.post(
        "/contexts/assemble", json=body, headers=bearer(tenant_a["token"])
    )
    assert response.status_code == 200, response.text
    reader = mint(owner_id=uuid.UUID(tenant_a["tenant"]), roles=["subscriber"])
    await _sign_in(browsing, jwt_live_url, reader)
    page = browsing.page
    await page.goto(f"{jwt_live_url}/#/agents/{tenant_a['agent']}/{session}")
    facts = await page.wait_for_selector("#context-facts")  # a worker may have assembled too
    version = await facts.get_attribute("data-version")
    await page.click("#assemble-again")
    alert = await page.wait_for_selector("#assemble-status [role=alert]")
    assert "403" in await alert.inner_text()
    assert await page.locator(f"#context-facts[data-version='{version}']").count() == 1
