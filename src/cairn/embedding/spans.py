"""Where a text's word-pieces sit: the seam the chunker counts tokens through.

The real encoder reports its tokenizer's character offsets; the in-memory twin and any
embedder without a tokenizer fall back to :func:`word_spans`, which counts words and
punctuation marks (BERT's pre-tokenizer splits both; a rare word becomes several
word-pieces, so the fallback undercounts — chunk windows leave room for that).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, runtime_checkable

Span = tuple[int, int]
SpanFn = Callable[[str], list[Span]]

_PIECE = re.compile(r"\w+|[^\w\s]")


@runtime_checkable
class CountsTokens(Protocol):
    def token_spans(self, text: str) -> list[Span]:
        """``(start, end)`` character offsets of each word-piece, specials excluded."""
        ...


def word_spans(text: str) -> list[Span]:
    return [match.span() for match in _PIECE.finditer(text)]


def token_spans_of(embedder: object, text: str) -> list[Span]:
    """The embedder's own word-pieces when it knows them, else words and punctuation."""
    if isinstance(embedder, CountsTokens):
        return embedder.token_spans(text)
    return word_spans(text)
