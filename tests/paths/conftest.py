"""The worker's handlers on the test database, called directly (no consumer): the debug
path tests drive a session's records through them one by one."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI

from cairn.config import Settings
from cairn.context.builder import ContextBuilder
from cairn.edges.builder import EdgeOptions
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder
from cairn.worker.handlers import Handlers


@pytest.fixture
async def handlers(app: FastAPI, settings: Settings) -> Handlers:
    sessions = app.state.resources.session_factory
    builder = await asyncio.to_thread(
        ContextBuilder.create, settings, sessions, Transforms(settings.transforms), NoEmbedder()
    )
    return Handlers(sessions, EdgeOptions(), builder)
