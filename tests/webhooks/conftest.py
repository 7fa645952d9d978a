"""Fixtures for webhook tests: a local receiver, and no webhook left active afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.webhooks.receiver import Receiver

from cairn.db.models import webhooks


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    running = await Receiver().start()
    yield running
    await running.close()


@pytest.fixture(autouse=True)
async def no_webhooks_left(db: AsyncEngine) -> AsyncIterator[None]:
    """Tests share one database and one delivery loop: a webhook left active would receive
    later tests' events."""
    yield
    async with db.begin() as connection:
        await connection.execute(update(webhooks).values(active=False))
