"""The one cache of the spectral tables that depend only on shapes (bin indices, band counts and centres), per device:
least recently used first out, bounded in bytes, and emptied by ``release`` (the engine calls it when ComfyUI frees
memory: nodes/rope_patch/memory.py), so no table outlives the models on a GPU."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import torch

#: Enough for every table of a 16384² latent (its radial index alone is 32 MiB) and the sizes sampled before it.
MAX_BYTES = 96 * 2**20


def _bytes(value: object) -> int:
    tensors = value if isinstance(value, tuple) else (value,)
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


class ShapeCache:
    """``get(key, build)``: the cached value of ``key``, built by ``build()`` on a miss. Values (a tensor or a tuple of
    tensors) are kept while their bytes fit ``max_bytes``; the least recently used go first."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._values: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._values.values())

    def get(self, key: Hashable, build: Callable[[], object]) -> object:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key][0]
        value = build()
        size = _bytes(value)
        with self._lock:
            if size <= self.max_bytes:
                self._values[key] = (value, size)
                total = sum(s for _, s in self._values.values())
                while total > self.max_bytes:
                    _, (_, dropped) = self._values.popitem(last=False)
                    total -= dropped
        return value

    def release(self) -> None:
        with self._lock:
            self._values.clear()


TABLES = ShapeCache()


def release() -> None:
    """Drop every cached table (ComfyUI freeing memory: models unloaded, caches emptied)."""
    TABLES.release()
