"""The trigger itself: always the first seed, at cost 0."""

from __future__ import annotations

from cairn.context.model import TRIGGER_SOURCE, Seed
from cairn.context.sources.base import SeedBatch, SeedCost, SeedQuery, SeedRequest


class TriggerSource:
    name = TRIGGER_SOURCE
    cost = SeedCost(base=0.0, span=0.0)

    async def query(self, request: SeedRequest) -> SeedQuery | SeedBatch:
        return await self.seeds(request)

    async def seeds(self, request: SeedRequest) -> SeedBatch:
        return SeedBatch([Seed(request.trigger.record.id, self.name, 1.0, "the trigger")])


SOURCE = TriggerSource()
