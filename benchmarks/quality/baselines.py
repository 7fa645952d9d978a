"""The four baselines: rank a conversation's turns for a question, then pack the ranking
into the budget exactly as Cairn packs records — same blocks, same tokenizer, same
reserved section headers and trigger block, and a turn that does not fit is skipped."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

from cairn.context.model import Section
from cairn.context.render import fixed_overhead, section_header
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
    tokens: list[int]  # tokens of each block
    embeddings: np.ndarray  # the server's embeddings of the turns, one row per turn
    bm25: BM25Okapi

    @classmethod
    def build(
        cls,
        blocks: list[str],
        llm_texts: list[str],
        embeddings: list[list[float]],
        counter: TokenCounter,
    ) -> Corpus:
        matrix = np.asarray(embeddings, dtype=np.float64)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return cls(
            blocks=blocks,
            tokens=[counter.count(block) for block in blocks],
            embeddings=matrix,
            bm25=BM25Okapi([words(text) for text in llm_texts]),
        )

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
    stop), shown chronologically, with the trigger; never more than ``budget`` tokens."""
    room = budget - fixed_overhead(counter) - counter.count(trigger_block)
    chosen: set[int] = set()
    for index in ranking:
        if corpus.tokens[index] <= room:
            chosen.add(index)
            room -= corpus.tokens[index]
    text = compose([corpus.blocks[i] for i in sorted(chosen)], trigger_block)
    if counter.count(text) > budget:
        raise AssertionError(f"a {budget}-token baseline context came out larger")
    return text, chosen


def compose(history: list[str], trigger_block: str) -> str:
    parts = [section_header(Section.history), *history] if history else []
    return "".join([*parts, section_header(Section.trigger), trigger_block])


Ranker = Callable[[str, Sequence[float]], dict[str, list[int]]]
