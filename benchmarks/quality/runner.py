"""One benchmark run against a live Cairn: load the conversations, ask every question."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from baselines import Corpus
from client import AgentSpec, Answered, CairnClient, agent_body
from dataset import Conversation, Question

from cairn.breadcrumbs.text import body_text
from cairn.context.blocks import item_block, run_line
from cairn.context.model import Record
from cairn.context.tokens import TokenCounter

FETCH_CONCURRENCY = 16


@dataclass
class Loaded:
    conversation: Conversation
    session_tag: str
    record_ids: list[str]  # the turns' record ids, in conversation order
    corpus: Corpus


@dataclass
class Asked:
    loaded: Loaded
    question: Question
    answered: Answered


@dataclass
class Run:
    run_tag: str
    agents: dict[int, str]
    loaded: list[Loaded]
    asked: list[Asked] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


async def prepare(
    client: CairnClient,
    conversations: Sequence[Conversation],
    budgets: Sequence[int],
    spec: AgentSpec,
    counter: TokenCounter,
) -> Run:
    """Define one agent per budget, post every turn, wait until the worker built their edges."""
    run_id = uuid.uuid4().hex[:8]
    run_tag = f"locomo:{run_id}"
    await _settle(client)
    before = await client.worker_messages()
    agents = {budget: f"locomo-{run_id}-{budget}" for budget in budgets}
    for budget, agent_id in agents.items():
        await client.create(agent_body(agent_id, budget, run_tag, spec))
    started = time.perf_counter()
    tags = [f"session:locomo-{run_id}-{c.conv_id}" for c in conversations]
    ids = await asyncio.gather(
        *(
            client.post_turns(c.turns, tag, spec.turn_schema)
            for c, tag in zip(conversations, tags, strict=True)
        )
    )
    posted = time.perf_counter()
    await client.wait_for_worker(before + len(agents) + sum(len(c.turns) for c in conversations))
    run = Run(run_tag, agents, [])
    run.seconds = {
        "post_turns": posted - started,
        "edges_after_posts": time.perf_counter() - posted,
    }
    for conversation, tag, by_dia in zip(conversations, tags, ids, strict=True):
        record_ids = [by_dia[turn.dia_id] for turn in conversation.turns]
        corpus = await _corpus(client, record_ids, counter)
        run.loaded.append(Loaded(conversation, tag, record_ids, corpus))
    return run


async def ask_all(client: CairnClient, run: Run, limit: int | None, stride: int = 1) -> None:
    """Every ``stride``-th question (the first ``limit`` of them), one at a time (so no
    question is ever in another one's graph)."""
    started = time.perf_counter()
    for loaded in run.loaded:
        for question in loaded.conversation.questions[::stride][:limit]:
            answered = await client.ask(question.text, loaded.session_tag, run.run_tag, run.agents)
            run.asked.append(Asked(loaded, question, answered))
    run.seconds["questions"] = time.perf_counter() - started


async def _settle(client: CairnClient) -> None:
    """Until the worker is idle (the bootstrap records' events are handled)."""
    previous = -1.0
    while (current := await client.worker_messages()) != previous:
        previous = current
        await asyncio.sleep(1.0)


async def _corpus(client: CairnClient, record_ids: list[str], counter: TokenCounter) -> Corpus:
    slots = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def full(record_id: str) -> dict[str, Any]:
        async with slots:
            return await client.full(record_id)

    fulls = await asyncio.gather(*(full(record_id) for record_id in record_ids))
    views = await client.views(record_ids)
    return Corpus.build(
        [block_of(view) for view in views],
        views[0]["schema_name"],
        [item["llm_text"] for item in fulls],
        [item["embedding"] for item in fulls],
        counter,
    )


def block_of(view: dict[str, Any]) -> tuple[str, str | None]:
    """A record's block as the context builder renders it (header, then the hinted view, or
    the compact rendering of a record without hints), and its line in a run of records."""
    transform = view.get("transform") or {}
    source = transform.get("source", "none")
    replaced = bool(transform.get("applied")) and source != "none"
    body = body_text(view["context"], source, replaced, view["title"])
    now = datetime.now(UTC)
    record = Record(
        id=uuid.UUID(view["id"]), owner_id=uuid.UUID(int=0), schema_name=view["schema_name"],
        title=view["title"], tags=tuple(view["tags"]), context=view["context"],
        llm_hints=None, created_at=now, updated_at=now,
    )  # fmt: skip
    block = item_block(record, lambda _: body)
    return block, run_line(record, block)
