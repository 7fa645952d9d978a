"""Evidence recall of Cairn and the baselines, and where Cairn's evidence came from or went.

An evidence turn is present when its block (exactly as rendered into contexts) is in the
context text, or its line in a run of turns under one header. Recall of a question = share
of its evidence turns present.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from baselines import BASELINES, pack
from runner import Asked, Run

from cairn.context.model import Section
from cairn.context.render import section_header
from cairn.context.tokens import TokenCounter

SYSTEMS = ("cairn", *BASELINES)
TRIGGER_HEADER = section_header(Section.trigger)


@dataclass
class Scores:
    # system → budget → one (category, recall) per question
    recall: dict[str, dict[int, list[tuple[int, float]]]] = field(default_factory=dict)
    # system → budget → tokens of each context
    tokens: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    # budget → how each evidence turn fared in Cairn's assembly
    fates: dict[int, Counter[str]] = field(default_factory=dict)
    # turn blocks Cairn rendered, compared with the benchmark's rendering of them
    blocks_compared: int = 0
    blocks_different: int = 0
    foreign_items: int = 0  # records from other sessions in Cairn's contexts


def score(run: Run, counter: TokenCounter) -> Scores:
    scores = Scores()
    for system in SYSTEMS:
        scores.recall[system] = {budget: [] for budget in run.agents}
        scores.tokens[system] = {budget: [] for budget in run.agents}
    scores.fates = {budget: Counter() for budget in run.agents}
    for asked in run.asked:
        _score_question(asked, scores, counter)
    return scores


def _score_question(asked: Asked, scores: Scores, counter: TokenCounter) -> None:
    corpus, category = asked.loaded.corpus, asked.question.category
    index = {turn.dia_id: n for n, turn in enumerate(asked.loaded.conversation.turns)}
    evidence = [index[dia_id] for dia_id in asked.question.evidence]
    contexts = asked.answered.contexts
    any_text = contexts[max(contexts)]["formatted_context"]
    trigger_block = any_text.split(TRIGGER_HEADER, 1)[1]
    rankings = corpus.rankings(asked.question.text, asked.answered.embedding)
    for budget, context in contexts.items():
        text = context["formatted_context"]
        present = [corpus.shown(i, text) for i in evidence]
        scores.recall["cairn"][budget].append((category, sum(present) / len(evidence)))
        scores.tokens["cairn"][budget].append(int(context["token_count"]))
        _diagnose(asked, context, evidence, present, scores, budget)
        for name in BASELINES:
            packed, chosen = pack(rankings[name], corpus, trigger_block, budget, counter)
            hit = sum(i in chosen for i in evidence) / len(evidence)
            scores.recall[name][budget].append((category, hit))
            scores.tokens[name][budget].append(counter.count(packed))


def _diagnose(
    asked: Asked,
    context: dict[str, Any],
    evidence: list[int],
    present: list[bool],
    scores: Scores,
    budget: int,
) -> None:
    """Check the rendering of every turn Cairn selected; record each evidence turn's fate."""
    explain, text = context["explain"], context["formatted_context"]
    position = {rid: n for n, rid in enumerate(asked.loaded.record_ids)}
    for item in explain["selected"]:
        n = position.get(item["record_id"])
        if n is None:
            scores.foreign_items += item["record_id"] != asked.answered.trigger_id
            continue
        scores.blocks_compared += 1
        scores.blocks_different += not asked.loaded.corpus.shown(n, text)
    for n, shown in zip(evidence, present, strict=True):
        fate = _fate(explain, asked.loaded.record_ids[n], shown)
        scores.fates[budget][fate] += 1


def _fate(explain: dict[str, Any], record_id: str, shown: bool) -> str:
    seed = next((s for s in explain["seeds"] if s["record_id"] == record_id), None)
    origin = f"{seed['source']} seed" if seed else "graph"
    if shown:
        chosen = next(s for s in explain["selected"] if s["record_id"] == record_id)
        if chosen["hops"] == 0:
            return f"present: {chosen['source']} seed"
        return f"present: {chosen['hops']} hops from a {chosen['source']} seed"
    dropped = [d for d in explain["dropped"] if d["record_id"] == record_id]
    if not dropped:
        return "missed: not a candidate (not seeded, not in the graph)"
    last = dropped[-1]
    return f"missed: {origin}, dropped at {last['stage']} ({last['reason']})"
