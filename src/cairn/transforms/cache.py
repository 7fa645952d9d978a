"""A small thread-safe LRU map (renders run in worker threads, invalidation on the loop)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self.get_many((key,))[0]

    def put(self, key: K, value: V) -> None:
        self.put_many(((key, value),))

    def get_many(self, keys: Iterable[K]) -> list[V | None]:
        """The value of each key (None: not held), each found one now the most recently
        used, under one lock: an assembly looks up a few hundred records and blocks at
        once, and a call and a lock per key cost ~0.4 ms of it."""
        found: list[V | None] = []
        with self._lock:
            items = self._items
            lookup, touch, add = items.get, items.move_to_end, found.append
            for key in keys:
                value = lookup(key)
                if value is not None:
                    touch(key)
                add(value)
        return found

    def put_many(self, pairs: Iterable[tuple[K, V]]) -> None:
        """Hold each (key, value) as the most recently used, under one lock; the least
        recently used go beyond ``size``."""
        with self._lock:
            items = self._items
            touch = items.move_to_end
            for key, value in pairs:
                items[key] = value
                touch(key)
            while len(items) > self.size:
                items.popitem(last=False)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value, or ``make()`` cached (made outside the lock: two threads may
        both make it, and the results are equal)."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found

    def discard_if(self, doomed: Callable[[K], bool]) -> None:
        with self._lock:
            for key in [key for key in self._items if doomed(key)]:
                del self._items[key]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
