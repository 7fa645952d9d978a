"""The trigger's domain, and what it keeps out (Echo Brain's "contamination").

A tenant that defines domains (``context.domains.v1``, context.domains) has each record
labelled on write. An assembly classifies its trigger — text, tags and embedding, as the
records were — and, when the classification is confident enough (``min_confidence``: the
margin over the runner-up) and the agent does not opt out (``domains.isolate: false``),
every candidate whose labels are all isolated from the trigger's domain is left out, by
every source and by the graph walk, and reported as ``isolated_domain``. A trigger its words,
tags and the example centroids do not place confidently is classified again with the votes of
its nearest labelled records (context.neighbours; one query on the embedding index, only
then); the votes appear in the evidence.

Unlabelled candidates are judged the same way, with the labelled records the assembly holds
as their neighbours, and left out when confidently of an isolated domain (context.judge):
"unlabelled records are never isolated" no longer holds in an isolating assembly. A
trigger whose domain is isolated from every other (``"*"``) keeps only the unlabelled
candidates judged of its own domain.

Without a definition nothing here runs: no query, no label read (the default path is
unchanged).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.breadcrumbs.text import build_llm_text
from cairn.context.agents import Agent
from cairn.context.domain_store import UNLABELLED_SCHEMAS, nearest_labelled
from cairn.context.domains import DomainSet
from cairn.context.judge import Judged, Pool, Unlabelled, judge
from cairn.context.model import Dropped, DropReason, Graph, Record, Seed
from cairn.context.records import RecordCache, cached_vectors, unit_vector
from cairn.context.signals import DomainSignal
from cairn.context.trigger import AssemblyTrigger
from cairn.db.models import breadcrumbs


async def classify_trigger(
    session: AsyncSession, domains: DomainSet, agent: Agent, found: AssemblyTrigger
) -> DomainSignal:
    """The trigger's domain, its confidence and evidence, and whether it isolates."""
    needs_embedding = any(domain.centroid is not None for domain in domains.domains)
    embedding = await _embedding(session, found) if needs_embedding else None
    verdict = domains.classify(found.text, found.record.tags, embedding)
    if not domains.placed(verdict):
        embedding = embedding if needs_embedding else await _embedding(session, found)
        if embedding is not None:
            owner, own_id = found.record.owner_id, found.record.id
            near = await nearest_labelled(session, owner, domains.version, embedding, own_id)
            verdict = domains.with_neighbours(verdict, near)
    isolating = agent.isolate_domains and domains.placed(verdict)
    return DomainSignal(
        name=verdict.domain,
        confidence=verdict.confidence,
        scores=verdict.scores,
        evidence=verdict.evidence,
        isolating=isolating,
        half_life_days=None if verdict.domain is None else domains.half_life_days(verdict.domain),
    )


def isolated_domains(domains: DomainSet, signal: DomainSignal) -> frozenset[str]:
    """The domains whose records the assembly leaves out (none unless it isolates)."""
    if not signal.isolating or signal.name is None:
        return frozenset()
    mine = signal.name
    return frozenset(name for name in domains.names if domains.isolated(name, mine))


def exclusive_domain(domains: DomainSet, signal: DomainSignal) -> str | None:
    """The trigger's domain when the assembly isolates and that domain is isolated from
    every other: its unlabelled candidates stay only when judged of it (context.judge)."""
    if not signal.isolating or signal.name is None or not domains.exclusive(signal.name):
        return None
    return signal.name


def half_life_of(domains: DomainSet) -> Callable[[Record], float | None] | None:
    """A record's recency half-life: the shortest of its labels' (None: no domain has
    one, so nothing decays)."""
    lives = {name: domains.half_life_days(name) for name in domains.names}
    if not any(lives.values()):
        return None

    def of(record: Record) -> float | None:
        found = [life for label in record.domains if (life := lives.get(label))]
        return min(found) if found else None

    return of


async def _embedding(session: AsyncSession, found: AssemblyTrigger) -> Sequence[float] | None:
    """A query's embedding is in its probe; a stored trigger's is read (pgvector's type
    decodes it)."""
    if not found.probe.stored:
        return found.probe.embedding
    query = select(breadcrumbs.c.embedding).where(breadcrumbs.c.id == found.record.id)
    vector = await session.scalar(query)
    return None if vector is None else [float(value) for value in vector]


# The labels and vectors of records the assembly holds no vector of, or has left out.
_POOL_ROWS = text(
    "SELECT id, version, domains, vector_send(embedding) AS vector FROM breadcrumbs"
    " WHERE owner_id = :owner AND id = ANY(:ids) AND embedding IS NOT NULL"
)


async def without_judged(
    session: AsyncSession,
    owner: uuid.UUID,
    domains: DomainSet,
    isolated: frozenset[str],
    graph: Graph,
    seeds: list[Seed],
    *,
    left_out: Sequence[uuid.UUID],
    trigger_id: uuid.UUID,
    cache: RecordCache | None = None,
    exclusive: str | None = None,
) -> tuple[Graph, list[Seed], list[Dropped]]:
    """The graph and seeds without the unlabelled candidates judged to be of an ``isolated``
    domain (context.judge), and those as dropped with the reason. ``left_out``: the records
    the sources and the walk left out as isolated, the labelled neighbours from the domains
    the assembly keeps out. At most one query, and none without unlabelled candidates."""
    judged = await judge_candidates(
        session, owner, domains, isolated, graph,
        left_out=left_out, trigger_id=trigger_id, cache=cache, exclusive=exclusive,
    )  # fmt: skip
    if not judged:
        return graph, seeds, []
    gone = {item.record_id for item in judged}
    records = {rid: record for rid, record in graph.records.items() if rid not in gone}
    kept = replace(graph, records=records, isolated=(*graph.isolated, *sorted(gone, key=str)))
    dropped = [
        Dropped(item.record_id, DropReason.isolated_domain, evidence=item.evidence)
        for item in judged
    ]
    return kept, [seed for seed in seeds if seed.record_id not in gone], dropped


async def judge_candidates(
    session: AsyncSession,
    owner: uuid.UUID,
    domains: DomainSet,
    isolated: frozenset[str],
    graph: Graph,
    *,
    left_out: Sequence[uuid.UUID],
    trigger_id: uuid.UUID,
    cache: RecordCache | None = None,
    exclusive: str | None = None,
) -> list[Judged]:
    """The graph's unlabelled records (the trigger and the schemas never labelled aside)
    judged to be of an ``isolated`` domain. Vectors come from ``cache`` where it holds them;
    the rest, and the labels of ``left_out``, in one query."""
    unlabelled = [
        record
        for record in graph.records.values()
        if not record.domains
        and record.id != trigger_id
        and record.schema_name not in UNLABELLED_SCHEMAS
    ]
    if not unlabelled:
        return []
    others = (record for record in graph.records.values() if record.id != trigger_id)
    vectors, uncached = cached_vectors(others, cache)
    missing = [*dict.fromkeys(left_out), *uncached]
    labels = {rid: record.domains for rid, record in graph.records.items()}
    if missing:
        rows = await session.execute(_POOL_ROWS, {"owner": owner, "ids": missing})
        for row in rows:
            vectors[row.id] = unit_vector(row.vector)
            labels[row.id] = tuple(row.domains)
            if cache is not None and row.id in graph.records:
                cache.put_vector(row.id, row.version, vectors[row.id])
    pool = Pool.of(
        {
            rid: (found, vectors[rid])
            for rid, found in labels.items()
            if found and rid in vectors and rid != trigger_id
        }
    )
    candidates = [
        Unlabelled(r.id, build_llm_text(r.title, None, r.context), vectors.get(r.id))
        for r in sorted(unlabelled, key=lambda r: r.id.int)
    ]
    return judge(domains, isolated, candidates, pool, exclusive=exclusive)
