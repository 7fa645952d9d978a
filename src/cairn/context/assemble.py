"""One assembly: trigger → seeds → graph → render items → select → render → explain.

A chain of small stages with plain data between them; the timings and the explanation are
collected as data. Writing the result is the caller's business (``context.write``).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context import ranking
from cairn.context import seeds as seeding
from cairn.context.agents import Agent
from cairn.context.budget import resolve_budget
from cairn.context.explain import Timer, build_explain
from cairn.context.graph import load_graph
from cairn.context.model import (
    Budget,
    BudgetSource,
    Dropped,
    DropReason,
    Record,
    Seed,
    SeedSource,
)
from cairn.context.pathfinder import DEFAULT_COSTS, select_within_budget
from cairn.context.records import RecordCache
from cairn.context.render import ItemBlocks, assemble_text, fixed_overhead
from cairn.context.support import with_neighbour_support
from cairn.context.terms import CommonWords
from cairn.context.tokens import TokenCounter
from cairn.context.trigger import AssemblyTrigger
from cairn.embedding import tag_pointers

MakeBlocks = Callable[[AsyncSession, uuid.UUID, list[Record]], Awaitable[ItemBlocks]]


@dataclass(frozen=True, slots=True)
class AssemblyOptions:
    default_budget: int = 4000
    max_nodes: int = 200
    radius: int = 2
    fanout: int = 16
    similarity_scale: float = 0.65
    # Records beyond the seeds loaded into the graph, nearest first (see context.graph).
    max_candidates: int = 150
    # Share of the best temporal neighbour's score a semantic seed gains (context.support).
    neighbour_support: float = 0.1


@dataclass
class Assembly:
    agent_id: str
    trigger_id: uuid.UUID
    session_tag: str | None
    context: dict[str, Any] = field(default_factory=dict)


async def assemble(
    session: AsyncSession,
    agent: Agent,
    found: AssemblyTrigger,
    *,
    event_id: str,
    excluded: frozenset[str],
    counter: TokenCounter,
    item_blocks: MakeBlocks,
    options: AssemblyOptions,
    llm_config: Mapping[str, Any] | None = None,
    record_cache: RecordCache | None = None,
    common_words: CommonWords | None = None,
    timer: Timer | None = None,
    budget_override: int | None = None,
) -> Assembly:
    """The assembled context for ``agent`` and the trigger (stored or a query's, see
    context.trigger). ``timer`` may already hold the phases that found the trigger;
    ``budget_override`` (an on-demand request's ``budget``) comes before every setting."""
    timer = timer or Timer()
    owner = agent.owner_id
    trigger, probe = found.record, found.probe
    # Keyword pointers: the trigger's tag pointers, then its stored entity keywords.
    pointers = list(dict.fromkeys([*tag_pointers(trigger.tags), *found.keywords]))
    sessions = sorted(trigger.session_tags)
    semantic = dataclasses.replace(
        agent.semantic, min_similarity=agent.semantic.min_similarity * options.similarity_scale
    )
    with timer.phase("seeds"):
        batches = [
            seeding.SeedBatch([Seed(trigger.id, SeedSource.trigger, 1.0, "the trigger")], []),
            await seeding.always_seeds(session, owner, agent.always, excluded, probe),
            await seeding.semantic_seeds(
                session, owner, probe, semantic, pointers, sessions, excluded,
                common_words=common_words,
            ),
            await seeding.session_seeds(
                session, owner, sessions, agent.session_limit, excluded, probe
            ),
        ]  # fmt: skip
    seeds, upstream = _merge(batches)
    with timer.phase("graph"):
        graph = await load_graph(
            session, owner, [s.record_id for s in seeds], excluded,
            radius=options.radius, fanout=options.fanout, preloaded={trigger.id: trigger},
            seed_costs=_seed_costs(seeds), max_candidates=options.max_candidates,
            cache=record_cache, quiet=trigger.id,
        )  # fmt: skip
    with timer.phase("render_items"):
        blocks = await item_blocks(session, owner, list(graph.records.values()))
    budget = (
        Budget(budget_override, BudgetSource.request)
        if budget_override
        else resolve_budget(
            agent.context_budget, _config_budget(llm_config), None, options.default_budget
        )
    )
    ranked = ranking.Ranked()
    if agent.ranking.compares_content:
        with timer.phase("rank"):
            others = [r for r in graph.records.values() if r.id != trigger.id]
            ranked = await ranking.rank(session, owner, others, agent.ranking, record_cache)
    with timer.phase("select"):
        seeds = with_neighbour_support(seeds, graph, options.neighbour_support)
        selection = select_within_budget(
            seeds, graph, blocks.cost_of(graph.records), budget.tokens,
            max_nodes=options.max_nodes, fixed_overhead=fixed_overhead(counter),
            max_hops=options.radius, max_path_cost=agent.ranking.max_path_cost,
            duplicates=ranked.duplicates, picker=ranked.picker,
        )  # fmt: skip
    with timer.phase("render"):
        rendered = assemble_text(
            selection, graph.records, blocks.text, counter, budget.tokens, blocks=blocks
        )
    explain = build_explain(
        seeds=seeds, selection=selection, rendered=rendered, budget=budget,
        records=graph.records, upstream_dropped=upstream,
    )  # fmt: skip
    result = Assembly(agent.agent_id, trigger.id, sessions[0] if sessions else None)
    result.context = {
        "consumer_id": agent.agent_id,
        "trigger_event_id": event_id,
        "trigger_id": str(trigger.id),
        "trigger_created_at": trigger.created_at.isoformat(),
        "assembled_at": datetime.now(UTC).isoformat(),
        "token_budget": budget.tokens,
        "token_count": rendered.token_count,
        "breadcrumb_count": len(rendered.items),
        "formatted_context": rendered.text,
        "explain": explain,
        "timings_ms": timer.as_dict(),
    }
    return result


def _merge(batches: list[seeding.SeedBatch]) -> tuple[list[Seed], list[Dropped]]:
    """Seeds in source priority order; a record seeded twice keeps its first seed."""
    seeds: list[Seed] = []
    dropped: list[Dropped] = []
    seen: set[uuid.UUID] = set()
    for batch in batches:
        dropped += [Dropped(rid, DropReason.below_threshold) for rid, _ in batch.below_threshold]
        for seed in batch.seeds:
            if seed.record_id in seen:
                dropped.append(Dropped(seed.record_id, DropReason.duplicate))
                continue
            seen.add(seed.record_id)
            seeds.append(seed)
    return seeds, dropped


def _seed_costs(seeds: list[Seed]) -> dict[uuid.UUID, float]:
    costs: dict[uuid.UUID, float] = {}
    for seed in seeds:
        cost = DEFAULT_COSTS.seed_cost(seed)
        costs[seed.record_id] = min(cost, costs.get(seed.record_id, cost))
    return costs


def _config_budget(llm_config: Mapping[str, Any] | None) -> int | None:
    budget = (llm_config or {}).get("context_budget")
    return budget if isinstance(budget, int) and budget > 0 else None
