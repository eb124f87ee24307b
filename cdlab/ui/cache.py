"""A small thread-safe LRU cache keyed on primitive tuples.

The dashboard caches datasets, problems and finished runs on small keys made
of strings and numbers only (design.md: never on arrays or sparse matrices,
which Panel's cache would hash by sampling or by id). The caches are shared by
every session of a server process on purpose: a value is a pure function of its
key and is never mutated after it is stored, so sessions cannot interfere
through them.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

_PRIMITIVES = (str, int, float, bool, type(None))
_MISSING = object()


def check_key(key):
    """Raise ValueError unless ``key`` is a (nested) tuple of primitives."""
    if isinstance(key, tuple):
        for part in key:
            check_key(part)
    elif not isinstance(key, _PRIMITIVES):
        raise ValueError(f"cache keys must be tuples of str/int/float/bool/None, got {type(key).__name__}")
    return key


class LRUCache:
    """``get_or_compute(key, fn)``: fn() is called at most once per key at a time."""

    def __init__(self, maxsize: int):
        self.maxsize = int(maxsize)
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict = {}
        self.hits = self.misses = 0

    def _hit(self, key):
        """The value under ``key`` or _MISSING; call with the lock held."""
        value = self._data.get(key, _MISSING)
        if value is not _MISSING:
            self._data.move_to_end(key)
            self.hits += 1
        return value

    def get(self, key, default=None):
        check_key(key)
        with self._lock:
            value = self._hit(key)
        return default if value is _MISSING else value

    def put(self, key, value):
        check_key(key)
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __contains__(self, key):
        with self._lock:
            return key in self._data

    def get_or_compute(self, key, fn):
        check_key(key)
        with self._lock:
            value = self._hit(key)
            if value is not _MISSING:
                return value
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        # one computation per key: a second session asking for the same
        # dataset waits for the first instead of loading it twice
        with key_lock:
            with self._lock:
                value = self._hit(key)
                if value is not _MISSING:
                    return value
                self.misses += 1
            try:
                value = fn()
                self.put(key, value)
            finally:
                with self._lock:
                    self._key_locks.pop(key, None)
            return value

    def clear(self):
        with self._lock:
            self._data.clear()
