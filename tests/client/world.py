"""Records a client test needs on the live server: an agent with knowledge to find."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from cairn_client import AsyncClient


@dataclass(frozen=True)
class World:
    key: str
    agent_id: str
    knowledge_schema: str
    session: str
    ask_tag: str


async def agent_world(cairn: AsyncClient) -> World:
    """An agent triggered by ``user.message.v1`` tagged ``ask:<key>``, whose semantic source
    searches a knowledge schema holding one whale fact and one tax fact."""
    key = uuid.uuid4().hex[:8]
    world = World(key, f"agent-{key}", f"kb{key}.v1", f"s{key}", f"ask:{key}")
    sources = {
        "semantic": {
            "enabled": True,
            "schemas": [world.knowledge_schema],
            "limit": 2,
            "min_similarity": 0.2,
        },
        "session": {"limit": 10},
    }
    agent = {
        "agent_id": world.agent_id,
        "context_trigger": {"schema_name": "user.message.v1", "any_tags": [world.ask_tag]},
        "context_sources": sources,
        "context_budget": 600,
    }
    await cairn.create_breadcrumb(world.agent_id, agent, schema_name="agent.def.v1")
    whales = {"text": "The blue whale is the largest animal, up to 30 metres long."}
    await cairn.create_breadcrumb("Whale facts", whales, schema_name=world.knowledge_schema)
    taxes = {"text": "Quarterly VAT returns are due one month after the quarter."}
    await cairn.create_breadcrumb("Tax deadlines", taxes, schema_name=world.knowledge_schema)
    return world
