"""Whether an item's title says anything its block does not: the header drops a title whose
words only repeat the body (as a run of its words) or the schema's name (``User Message`` on
a ``user.message.v1``), case and punctuation aside."""

from __future__ import annotations

import re
from functools import lru_cache

from cairn.context.model import Record

_WORD = re.compile(r"[^\W_]+")
_VERSION = re.compile(r"v\d+")


def title_is_redundant(record: Record, body: str) -> bool:
    """Whether the title's words only repeat the body (as a run of its words) or the
    schema's name; case and punctuation aside."""
    title = _words(record.title)
    if not title or _schema_words(record.schema_name).issuperset(title):
        return True
    # Every word of a run of the body's words is in the folded body: most titles fail here.
    folded = body.casefold()
    in_body = all(word in folded for word in title)
    return in_body and f" {' '.join(title)} " in f" {' '.join(_WORD.findall(folded))} "


@lru_cache(maxsize=1024)
def _schema_words(schema_name: str | None) -> frozenset[str]:
    return frozenset(w for w in _words(schema_name or "") if not _VERSION.fullmatch(w))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())
