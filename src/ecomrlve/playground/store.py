"""A small thread-safe map that forgets entries left idle, and the oldest beyond a size bound.

Playground episodes and uploaded runs files both live in one: memory stays bounded however many
visitors come and go, and nothing outlives ``idle_seconds`` without being used. Each entry has an
owner (the visitor that made it) and a cost (1 per episode, bytes per runs file): an owner over its
quota loses its own least recently used entries, and when the store as a whole is over its bounds
the entries go from the owner holding the most. So one visitor, however busy, never evicts the
entries of a visitor holding fewer than it does.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")


class _Entry(NamedTuple, Generic[T]):
    used: float
    value: T
    owner: str
    cost: int


class IdleStore(Generic[T]):
    """Values by opaque key; a read refreshes the entry, idle ones expire, the least recently used go first.

    ``max_entries`` and ``max_cost`` bound the whole store, ``owner_entries`` and ``owner_cost`` one owner's
    share (None: no bound).
    """

    def __init__(self, *, idle_seconds: float, max_entries: int, max_cost: int | None = None,
                 owner_entries: int | None = None, owner_cost: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if idle_seconds <= 0 or max_entries < 1:
            raise ValueError("idle_seconds must be positive and max_entries at least 1")
        self.idle_seconds = idle_seconds
        self.max_entries, self.max_cost = max_entries, max_cost
        self.owner_entries, self.owner_cost = owner_entries, owner_cost
        self._clock = clock
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, value: T, key: str | None = None, *, owner: str = "", cost: int = 1) -> str:
        """Store ``value`` under ``key`` (default: a fresh random one) for ``owner`` and return the key."""
        key = key or secrets.token_hex(12)
        with self._lock:
            self._expire()
            self._entries[key] = _Entry(self._clock(), value, owner, cost)
            self._entries.move_to_end(key)
            while self._over(owner):  # the owner's own share first, never the entry just added
                self._evict(next(k for k, e in self._entries.items() if e.owner == owner and k != key))
            while self._over(None):
                self._evict(self._fair_victim(key))
        return key

    def get(self, key: str) -> T | None:
        """The value under ``key``, marked as used now; None if absent or expired."""
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries[key] = entry._replace(used=self._clock())
            self._entries.move_to_end(key)
            return entry.value

    def cost(self, owner: str | None = None) -> int:
        """The cost held by ``owner`` (None: by everyone)."""
        with self._lock:
            self._expire()
            return sum(e.cost for e in self._entries.values() if owner is None or e.owner == owner)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._entries)

    def _over(self, owner: str | None) -> bool:
        """Whether ``owner``'s share (None: the whole store) is over its bounds, with more than one entry."""
        held = [e for e in self._entries.values() if owner is None or e.owner == owner]
        most, budget = (self.max_entries, self.max_cost) if owner is None else (self.owner_entries, self.owner_cost)
        return len(held) > 1 and (most is not None and len(held) > most
                                  or budget is not None and sum(e.cost for e in held) > budget)

    def _fair_victim(self, keep: str) -> str:
        """The least recently used entry of the owner holding the most (by cost), other than ``keep``."""
        held: Counter[str] = Counter()
        for k, e in self._entries.items():
            if k != keep:
                held[e.owner] += e.cost
        richest = max(held, key=lambda owner: held[owner])
        return next(k for k, e in self._entries.items() if e.owner == richest and k != keep)

    def _evict(self, key: str) -> None:
        del self._entries[key]

    def _expire(self) -> None:
        deadline = self._clock() - self.idle_seconds
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.used > deadline:
                break
            del self._entries[key]
