"""What ``ItemBlocks`` keeps for later assemblies and for the stored blocks
(context.block_store): a line's count is not encoded again, a snippet is never kept, and
only blocks rendered in this assembly are offered to be stored."""

from __future__ import annotations

import uuid

from tests.context.helpers import record

from cairn.context.block_store import Rendering
from cairn.context.blocks import CachedBlock, ItemBlocks, untitled_header
from cairn.context.model import Record
from cairn.context.tokens import TokenCounter
from cairn.transforms.cache import LRU


class Counting:
    """The counter, noting every text it is asked to count."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter, self.texts = counter, list[str]()

    def count(self, text: str) -> int:
        self.texts.append(text)
        return self.counter.count(text)


def _body(r: Record) -> str:
    return str(r.context["text"])


def test_a_lines_count_from_the_cache_is_not_counted_again(counter: TokenCounter) -> None:
    one_line = record(1, title="", context={"text": "a short note"})
    cache: LRU[object, CachedBlock] = LRU(10)
    keys = {one_line.id: ("k", 1)}
    warm = ItemBlocks(_body, counter, cache=cache, keys=keys)
    line = warm.line(one_line)
    assert line == ("a short note\n", counter.count("a short note\n"))
    assert cache.get(("k", 1)) == (warm.text(one_line), None, line[1])
    counting = Counting(counter)
    hot = ItemBlocks(_body, counting, cache=cache, keys=keys)  # type: ignore[arg-type]
    assert hot.line(one_line) == line and hot.run_tokens(one_line) == line[1]
    assert counting.texts == []
    assert hot.rendered() == []  # from the cache: nothing to store


def test_a_snippet_is_neither_cached_nor_offered_to_be_stored(counter: TokenCounter) -> None:
    shown, other = record(1, title=""), record(2, title="")
    cache: LRU[object, CachedBlock] = LRU(10)
    blocks = ItemBlocks(_body, counter, cache=cache, keys={shown.id: ("a",), other.id: ("b",)})
    blocks.text(shown)
    blocks.substitute(shown.id, f"{untitled_header('note.v1')}a snippet\n", 5)
    assert blocks.line(shown) == ("a snippet\n", counter.count("a snippet\n"))
    blocks.tokens(other)
    kept = cache.get(("a",))
    assert kept is not None and "snippet" not in kept[0]
    assert [record_id for record_id, _ in blocks.rendered()] == [other.id]
    assert blocks.rendered()[0][1][:2] == (blocks.text(other), blocks.tokens(other))


def test_a_shared_records_block_is_left_to_its_owner(counter: TokenCounter) -> None:
    """An assembly may show a record another tenant shares with its owner: row-level
    security refuses storing that block under this tenant (and one refused row would lose
    the whole batch), so only the tenant's own rendered blocks are offered."""
    own, shared = record(1, title=""), record(2, title="", owner_id=uuid.uuid4())
    keys = {own.id: ("a",), shared.id: ("b",)}
    blocks = ItemBlocks(_body, counter, cache=LRU(10), keys=keys)
    blocks.tokens(own), blocks.tokens(shared)
    wanted = {r.id: (1, b"digest") for r in (own, shared)}
    rendering = Rendering(blocks, wanted, {r.id: r for r in (own, shared)})
    assert [b.record_id for b in rendering.fresh(counter, own.owner_id)] == [own.id]
    assert [b.record_id for b in rendering.fresh(counter, shared.owner_id)] == [shared.id]
