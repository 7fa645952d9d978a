"""One assembly: trigger → signals → seeds → graph → render items → select → render →
explain.

A chain of small stages with plain data between them; the timings and the explanation are
collected as data. Writing the result is the caller's business (``context.write``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context import ranking, sources
from cairn.context.agents import Agent
from cairn.context.blocks import ItemBlocks
from cairn.context.budget import resolve_budget
from cairn.context.domains import DomainSet
from cairn.context.explain import Timer, build_explain
from cairn.context.graph import load_graph
from cairn.context.graph_memory import GraphMemory
from cairn.context.isolation import (
    classify_trigger,
    exclusive_domain,
    half_life_of,
    isolated_domains,
    without_judged,
)
from cairn.context.layout import layout_for
from cairn.context.model import (
    TRIGGER_SOURCE,
    Budget,
    BudgetSource,
    Dropped,
    DropReason,
    Record,
    Seed,
)
from cairn.context.pathfinder import prepare_search, select_within_budget
from cairn.context.prior_fixes import render_prior_fixes
from cairn.context.recency import with_recency
from cairn.context.records import RecordCache, isolated_sql
from cairn.context.signals import extract_signals
from cairn.context.snippets import apply_snippets, mark_snippets
from cairn.context.sources import paths as paths_source
from cairn.context.support import with_neighbour_support
from cairn.context.terms import CommonWords
from cairn.context.tokens import TokenCounter
from cairn.context.trigger import AssemblyTrigger
from cairn.db.driver import while_answered
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
    domains: DomainSet | None = None,
    graphs: GraphMemory | None = None,
) -> Assembly:
    """The assembled context for ``agent`` and the trigger (stored or a query's, see
    context.trigger). ``timer`` may already hold the phases that found the trigger;
    ``budget_override`` (an on-demand request's ``budget``) comes before every setting;
    ``domains``: the tenant's, if it defines any (context.isolation); ``graphs``: the
    tenants' graphs in memory, if this process keeps them (context.graph_memory)."""
    timer = timer or Timer()
    owner = agent.owner_id
    trigger = found.record
    # Keyword pointers: the trigger's tag pointers, then its stored entity keywords.
    pointers = tuple(dict.fromkeys([*tag_pointers(trigger.tags), *found.keywords]))
    sessions = tuple(sorted(trigger.session_tags))
    with timer.phase("signals"):
        domain = None if domains is None else await classify_trigger(session, domains, agent, found)
        signals = extract_signals(
            found.text, trigger.tags, pointers, context=trigger.context, domain=domain
        )
    isolated = (
        frozenset() if domains is None or domain is None else isolated_domains(domains, domain)
    )
    request = sources.SeedRequest(
        session, agent, found, pointers, sessions, excluded,
        common_words=common_words, similarity_scale=options.similarity_scale, signals=signals,
        isolated=isolated,
    )  # fmt: skip
    with timer.phase("seeds"):  # the graph's catch-up rides along (context.graph_memory)
        batches = await sources.gather(request, None if graphs is None else graphs.along(owner))
    seeds, upstream = _merge(batches)
    if isolated:  # whatever a source did not leave out itself
        seeds, left_out = await _without_isolated(session, owner, seeds, isolated)
        reported = {
            item.record_id for item in upstream if item.reason is DropReason.isolated_domain
        }
        upstream += [item for item in left_out if item.record_id not in reported]
    with timer.phase("graph"):
        graph = await load_graph(
            session, owner, [s.record_id for s in seeds], excluded,
            radius=options.radius, fanout=options.fanout, preloaded={trigger.id: trigger},
            seed_costs=_seed_costs(seeds), max_candidates=options.max_candidates,
            cache=record_cache, quiet=trigger.id,
            scope=sessions if agent.session_scoped_graph else None, isolated=isolated,
            memory=graphs, vectors=agent.ranking.compares_content or bool(isolated),
        )  # fmt: skip
    named = {item.record_id for item in upstream}  # a record is dropped once, where first met
    walked_past = [
        Dropped(node, DropReason.isolated_domain) for node in graph.isolated if node not in named
    ]
    if isolated and domains is not None:  # unlabelled candidates, judged as the trigger is
        with timer.phase("judge"):
            kept_out = [i.record_id for i in upstream if i.reason is DropReason.isolated_domain]
            graph, seeds, judged = await without_judged(
                session, owner, domains, isolated, graph, seeds,
                left_out=[*kept_out, *graph.isolated], trigger_id=trigger.id, cache=record_cache,
                exclusive=None if domain is None else exclusive_domain(domains, domain),
            )  # fmt: skip
        walked_past += judged
    budget = (
        Budget(budget_override, BudgetSource.request)
        if budget_override
        else resolve_budget(
            agent.context_budget, _config_budget(llm_config), None, options.default_budget
        )
    )
    with timer.phase("render_items"):
        # The pathfinder's graph is built while PostgreSQL reads the stored blocks.
        blocks, prepared = await while_answered(
            item_blocks(session, owner, list(graph.records.values())),
            lambda: prepare_search(graph, max_hops=options.radius),
        )
        snippets = await apply_snippets(
            session, owner, found.probe, graph.records, blocks, counter, budget.tokens
        )
        prior_fixes = paths_source.enabled(agent.context_sources)
        if prior_fixes:
            render_prior_fixes(graph.records, blocks, counter)
    ranked = ranking.Ranked()
    if agent.ranking.compares_content:
        with timer.phase("rank"):
            others = [r for r in graph.records.values() if r.id != trigger.id]
            ranked = await ranking.rank(session, owner, others, agent.ranking, record_cache)
    with timer.phase("select"):
        layout = layout_for(
            agent.sections, graph.records, blocks, counter, signals.tier,
            prior_fixes=prior_fixes, trigger_id=trigger.id, budget=budget.tokens,
        )  # fmt: skip
        aging = None if domains is None else half_life_of(domains)
        if aging is not None:
            seeds = with_recency(seeds, graph.records, aging, trigger.created_at)
        seeds = with_neighbour_support(seeds, graph, options.neighbour_support)
        selection = select_within_budget(
            seeds, graph, layout.cost_of, budget.tokens,
            max_nodes=options.max_nodes, fixed_overhead=layout.overhead,
            max_hops=options.radius, admit=layout.admit,
            max_path_cost=agent.ranking.max_path_cost, duplicates=ranked.duplicates,
            picker=ranked.picker, prepared=prepared,
        )  # fmt: skip
        selection = layout.allocate(selection)
    with timer.phase("render"):
        rendered = layout.render(selection, budget.tokens)
    explain = build_explain(
        seeds=seeds, selection=selection, rendered=rendered, budget=budget,
        records=graph.records, upstream_dropped=upstream, signals=signals.as_explain(),
        graph_dropped=walked_past,
    ) | layout.explain(rendered)  # fmt: skip
    mark_snippets(explain, snippets)
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


def _merge(batches: list[sources.SeedBatch]) -> tuple[list[Seed], list[Dropped]]:
    """Seeds in source rank order; a record seeded twice keeps its first seed."""
    seeds: list[Seed] = []
    dropped: list[Dropped] = []
    seen: set[uuid.UUID] = set()
    for batch in batches:
        dropped += [Dropped(rid, DropReason.below_threshold) for rid, _ in batch.below_threshold]
        dropped += [Dropped(rid, DropReason.isolated_domain) for rid in batch.isolated]
        for seed in batch.seeds:
            if seed.record_id in seen:
                dropped.append(Dropped(seed.record_id, DropReason.duplicate))
                continue
            seen.add(seed.record_id)
            seeds.append(seed)
    return seeds, dropped


_ISOLATED_SEEDS = text(
    f"SELECT id FROM breadcrumbs b WHERE owner_id = :owner AND id = ANY(:ids)"
    f" AND {isolated_sql('b')}"
)


async def _without_isolated(
    session: AsyncSession, owner: uuid.UUID, seeds: list[Seed], isolated: frozenset[str]
) -> tuple[list[Seed], list[Dropped]]:
    """The seeds whose records are not of an isolated domain (the trigger always stays),
    and the others as dropped — one query for every source."""
    ids = [seed.record_id for seed in seeds if seed.source != TRIGGER_SOURCE]
    params = {"owner": owner, "ids": ids, "isolated": sorted(isolated)}
    found = set((await session.execute(_ISOLATED_SEEDS, params)).scalars()) if ids else set()
    kept = [seed for seed in seeds if seed.record_id not in found]
    dropped = [
        Dropped(seed.record_id, DropReason.isolated_domain)
        for seed in seeds
        if seed.record_id in found
    ]
    return kept, dropped


def _seed_costs(seeds: list[Seed]) -> dict[uuid.UUID, float]:
    costs: dict[uuid.UUID, float] = {}
    for seed in seeds:
        cost = sources.seed_cost(seed)
        costs[seed.record_id] = min(cost, costs.get(seed.record_id, cost))
    return costs


def _config_budget(llm_config: Mapping[str, Any] | None) -> int | None:
    budget = (llm_config or {}).get("context_budget")
    return budget if isinstance(budget, int) and budget > 0 else None
