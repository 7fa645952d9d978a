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

Without a definition nothing here runs: no query, no label read (the default path is
unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cairn.context.agents import Agent
from cairn.context.domain_store import nearest_labelled
from cairn.context.domains import DomainSet
from cairn.context.model import Record
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
