"""The four baselines: rank a conversation's turns for a question, then pack the ranking
into the budget exactly as Cairn packs records — same blocks, same runs of one-line turns
under one header, same tokenizer, same section headers and trigger block, a turn that
does not fit is skipped, and the last taken go if the exact count is over."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

from cairn.context.blocks import run_header
from cairn.context.model import Section
from cairn.context.render import section_header
from cairn.context.tokens import TokenCounter
from cairn.embedding.keywords import STOPWORDS

RRF_K = 60
WORD = re.compile(r"\w+")
BASELINES = ("recency", "dense", "bm25", "rrf")


def words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass
class Corpus:
    """One conversation's turns, in conversation order, as the baselines see them."""

    blocks: list[str]  # each turn's block exactly as Cairn renders it into the context
    lines: list[str | None]  # each turn's line in a run of turns (None: it has none)
    schema: str  # the turns' schema (their runs' header names it)
    tokens: list[int]  # tokens of each block
    costs: list[int]  # tokens each turn adds: its line in a run, else its block
    embeddings: np.ndarray  # the server's embeddings of the turns, one row per turn
    bm25: BM25Okapi

    @classmethod
    def build(
        cls,
        blocks: list[tuple[str, str | None]],
        schema: str,
        llm_texts: list[str],
        embeddings: list[list[float]],
        counter: TokenCounter,
    ) -> Corpus:
        matrix = np.asarray(embeddings, dtype=np.float64)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        tokens = [counter.count(block) for block, _ in blocks]
        return cls(
            blocks=[block for block, _ in blocks],
            lines=[line for _, line in blocks],
            schema=schema,
            tokens=tokens,
            costs=[
                n if line is None else counter.count(line)
                for n, (_, line) in zip(tokens, blocks, strict=True)
            ],
            embeddings=matrix,
            bm25=BM25Okapi([words(text) for text in llm_texts]),
        )

    def shown(self, index: int, text: str) -> bool:
        """Whether the turn is in ``text``: its block, or its line in a run."""
        line = self.lines[index]
        return self.blocks[index] in text or (line is not None and f"\n{line}" in text)

    def rankings(self, question: str, embedding: Sequence[float]) -> dict[str, list[int]]:
        """Turn indexes, best first, per baseline (ties: earlier turn first)."""
        probe = np.asarray(embedding, dtype=np.float64)
        dense = _order(self.embeddings @ (probe / np.linalg.norm(probe)))
        bm25 = _order(np.asarray(self.bm25.get_scores(words(question)), dtype=np.float64))
        return {
            "recency": list(range(len(self.blocks) - 1, -1, -1)),
            "dense": dense,
            "bm25": bm25,
            "rrf": _fuse(dense, bm25),
        }


def _order(scores: np.ndarray) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


def _fuse(*rankings: list[int]) -> list[int]:
    fused = np.zeros(len(rankings[0]))
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            fused[index] += 1.0 / (RRF_K + rank)
    return _order(fused)


def pack(
    ranking: list[int], corpus: Corpus, trigger_block: str, budget: int, counter: TokenCounter
) -> tuple[str, set[int]]:
    """The context a baseline would give: turns in rank order while they fit (skip, do not
    stop), shown chronologically, with the trigger; never more than ``budget`` tokens (the
    last taken go while the exact count is over). The headers it needs are charged up front
    as Cairn charges them where they land: the history's, the trigger's, one run's."""
    headers = [section_header(Section.history), section_header(Section.trigger)]
    headers.append(run_header(corpus.schema))
    room = budget - sum(counter.count(header) for header in headers) - counter.count(trigger_block)
    taken: list[int] = []
    for index in ranking:
        if corpus.costs[index] <= room:
            taken.append(index)
            room -= corpus.costs[index]
    while True:
        text = compose(corpus, sorted(taken), trigger_block)
        if counter.count(text) <= budget:
            return text, set(taken)
        if not taken:
            raise AssertionError(f"a {budget}-token baseline context came out larger")
        taken.pop()


def compose(corpus: Corpus, history: list[int], trigger_block: str) -> str:
    """The history section as Cairn lays it out (runs of one-line turns), then the trigger."""
    parts = [section_header(Section.history)] if history else []
    run: list[int] = []
    for index in [*history, None]:
        if index is not None and corpus.lines[index] is not None:
            run.append(index)
            continue
        if len(run) > 1:
            parts += [run_header(corpus.schema), *(corpus.lines[i] or "" for i in run)]
        parts += [corpus.blocks[i] for i in run[:1] if len(run) == 1]
        run = []
        if index is not None:
            parts.append(corpus.blocks[index])
    return "".join([*parts, section_header(Section.trigger), trigger_block])


Ranker = Callable[[str, Sequence[float]], dict[str, list[int]]]
