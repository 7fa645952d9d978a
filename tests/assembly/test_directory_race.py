"""The agent directory against the database: an event that arrives while a tenant's
definitions are being loaded makes that load's result stale, whatever it read."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession
from tests.assembly.helpers import post_agent

from cairn.context import directory as directory_module
from cairn.context.agents import AGENT_SCHEMA
from cairn.context.directory import Directory


async def test_an_agent_written_during_a_load_is_not_lost_to_it(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    reading, finish = asyncio.Event(), asyncio.Event()

    def sessions(**kw: Any) -> AsyncSession:
        """The app's sessions, whose load waits after reading the agents (before the
        blacklist) until the test lets it finish."""
        session: AsyncSession = resources.session_factory(**kw)
        execute = session.execute

        async def held(statement: Any, *args: Any, **kwargs: Any) -> Any:
            if statement is directory_module._BLACKLIST:
                reading.set()
                await finish.wait()
            return await execute(statement, *args, **kwargs)

        session.execute = held  # type: ignore[method-assign]
        return session

    directory = Directory(sessions)  # type: ignore[arg-type]
    agent_id = f"race-{uuid.uuid4().hex[:8]}"
    loading = asyncio.create_task(directory.agents(owner))
    await reading.wait()  # the load has read the agents: the new one is not among them
    await post_agent(client, agent_id, "race", {"session": {"enabled": True}}, 1000)
    directory.on_event({"schema_name": AGENT_SCHEMA, "owner_id": str(owner)})
    finish.set()
    assert agent_id not in {a.agent_id for a in await loading}  # it read before the write
    assert agent_id in {a.agent_id for a in await directory.agents(owner)}
