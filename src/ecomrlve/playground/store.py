"""A small thread-safe map that forgets entries left idle, and the oldest beyond a size bound.

Playground episodes and uploaded runs files both live in one: memory stays bounded however many
visitors come and go, and nothing outlives ``idle_seconds`` without being used.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class IdleStore(Generic[T]):
    """Values by opaque key; a read refreshes the entry, idle ones expire, the least recently used go first."""

    def __init__(self, *, idle_seconds: float, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        if idle_seconds <= 0 or max_entries < 1:
            raise ValueError("idle_seconds must be positive and max_entries at least 1")
        self.idle_seconds = idle_seconds
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, value: T, key: str | None = None) -> str:
        """Store ``value`` under ``key`` (default: a fresh random one) and return the key."""
        key = key or secrets.token_hex(12)
        with self._lock:
            self._expire()
            self._entries[key] = (self._clock(), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return key

    def get(self, key: str) -> T | None:
        """The value under ``key``, marked as used now; None if absent or expired."""
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries[key] = (self._clock(), entry[1])
            self._entries.move_to_end(key)
            return entry[1]

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._entries)

    def _expire(self) -> None:
        deadline = self._clock() - self.idle_seconds
        while self._entries:
            key, (used, _) = next(iter(self._entries.items()))
            if used > deadline:
                break
            del self._entries[key]
