"""The stand-in of Qwen-Image 2.1's text/reference key cache as ComfyUI 0.37+ runs it (tests/qwen_image21_standin.py
builds the model around it). Written from reading Comfy-Org/ComfyUI, never run against the real thing:

* ``comfy/ldm/wan/model_animate2.py`` @1e416935 (``PoseBranchCache``, which 2.1 stores its keys in; line numbers as
  counted in that file): slots in least-recently-used order, most recent last (``select`` :133-154); a hit moves its
  slot to the end by its index (``del self.slots[i]`` :142); a miss with ``create`` evicts from the front while the
  store device's free memory is below 1.5x the largest filled slot (:150-152), then appends an empty slot; ``put``
  (:174-192) stores a block's stacked keys and values, quantized for ``int8`` (comfy-kitchen's per-row INT8 with a
  group Hadamard rotation, "convrot") or ``int4`` (its ConvRot W4A4), the group the largest power of 4 from 256 that
  divides the last dimension; ``take`` (:215) dequantizes and repeats to the batch; ``free`` releases every slot.
* ``comfy/ldm/qwen_image21/model.py`` @08f68f09 (``select_prefix_cache`` :272-298): "off" recomputes; a filled slot
  of the key is read; otherwise the run's one cache is created at its first miss (store "auto": the compute device
  when the patcher reports more than 4x the slot's bytes free, else the host when the pin budget allows, else no
  cache; "gpu" / "cpu" as named), and a new slot is made only while there is room for 2x its bytes (compute device)
  or its pin budget (host): "no room for this slot: recompute rather than evict the other cond's slot every step".
  The bytes shrink 2x (int8) or 4x (int4). The gate and ``select``'s eviction read two different numbers (the
  patcher's free memory counts weights it could offload, the eviction reads what is free now), so a slot can evict
  the other's: ``Memory`` keeps both.
* The slot lookup ComfyUI shipped first (comfyanonymous/ComfyUI's Wan-Animate2 ``PoseBranchCache``, @a464ac33
  ``model_animate2.py:143``, reused by 2.1's first releases): ``self.slots.remove(s)``. ``list.remove`` compares the
  slots before the match with ``==``; slots are dicts of tensors, so once a hit is not the oldest slot it raises
  (Boolean value of a multi-element tensor) - the crash third-party packs cite as Comfy-Org/ComfyUI#16511.
  ``ReleasedPoseBranchCache`` keeps that lookup.

Not modelled (CUDA only, nothing the pack reads): pinned memory, the offload stream and the two staging buffers of
``prefetch`` (where Comfy-Org/ComfyUI#16443's Windows multi-GPU abort happens); ``prefetch`` here queues the block.
"""

from __future__ import annotations

import sys

import torch

CONVROT_GROUPSIZE = 256


class Memory:
    """What the cache reads as free: ``budget`` bytes (None: plenty) less what the cache holds, plus ``offloadable``
    bytes the patcher could free (its ``get_free_memory``) and the pin budget may reclaim (``ensure_pin_budget``)."""

    def __init__(self, budget: int | None = None, offloadable: int = 0) -> None:
        self.budget, self.offloadable, self.held = budget, offloadable, 0

    def free(self) -> float:
        return float("inf") if self.budget is None else self.budget - self.held

    def patcher_free(self) -> float:
        return self.free() + self.offloadable

    def pin_budget(self, size: int) -> bool:
        return self.patcher_free() >= size


def _layouts():
    from comfy_kitchen.tensor import TensorCoreConvRotW4A4Layout, TensorWiseINT8Layout

    return TensorWiseINT8Layout, TensorCoreConvRotW4A4Layout


class PoseBranchCache:
    """Upstream's cache slots, newest lookup (see the module docstring); ``fills`` / ``hits`` / ``evictions`` count."""

    def __init__(self, store_device=None, dtype: str = "default", memory: Memory | None = None) -> None:
        self.store_device = torch.device(store_device or "cpu")
        self.dtype, self.memory = dtype, memory or Memory()
        self.slots: list[dict] = []  # most recently used last
        self.slot: dict | None = None
        self._pending: dict[int, torch.Tensor] = {}
        self.fills = self.hits = self.evictions = 0

    def _find(self, key: torch.Tensor) -> dict | None:
        for i, s in enumerate(self.slots):
            if s["key"].shape == key.shape and torch.equal(s["key"], key.to(s["key"].device)):
                del self.slots[i]
                return s
        return None

    def select(self, key: torch.Tensor, create: bool = True) -> bool | None:
        self._pending = {}
        found = self._find(key)
        if found is not None:
            self.slots.append(found)
            self.slot = found
            return True
        self.slot = None
        if not create:
            return False
        estimate = max((self._slot_bytes(s) for s in self.slots), default=0) * 1.5
        while self.slots and self.memory.free() < estimate:
            self._release(self.slots.pop(0))
            self.evictions += 1
        self.slot = {"key": key.clone().to(self.store_device), "blocks": {}, "params": {}, "shape": None}
        self.slots.append(self.slot)
        return None

    def _release(self, slot: dict) -> None:
        self._pending = {}
        self.memory.held -= self._slot_bytes(slot)

    def free(self) -> None:
        for slot in self.slots:
            self._release(slot)
        self.slots, self.slot = [], None

    def filled(self, num_blocks: int) -> bool:
        return self.slot is not None and len(self.slot["blocks"]) == num_blocks

    def put(self, i: int, t: torch.Tensor) -> None:
        params = None
        if self.dtype in ("int8", "int4"):
            self.slot["shape"] = t.shape
            group = CONVROT_GROUPSIZE
            while group > 4 and t.shape[-1] % group:
                group //= 4
            int8, int4 = _layouts()
            rows = t.reshape(-1, t.shape[-1])
            if self.dtype == "int4":
                t, params = int4.quantize(rows, convrot_groupsize=group)
            else:
                t, params = int8.quantize(rows, is_weight=True, per_channel=True, convrot=True,
                                          convrot_groupsize=group)
        t = t.to(self.store_device, copy=True)
        old = self.slot["blocks"].get(i)
        self.memory.held -= 0 if old is None else old.numel() * old.element_size()
        self.slot["blocks"][i] = t
        self.slot["params"][i] = params if params is None else params.to_device(self.store_device)
        self.memory.held += t.numel() * t.element_size()

    def prefetch(self, i: int, device, dtype) -> None:
        if self.slot is None or i not in self.slot["blocks"] or i in self._pending:
            return
        t = self.slot["blocks"][i]
        self._pending[i] = t.to(device) if self.slot["params"][i] is not None else t.to(device, dtype)

    def take(self, i: int, device, dtype, batch_size: int) -> torch.Tensor:
        if i not in self._pending:
            self.prefetch(i, device, dtype)
        t = self._pending.pop(i)
        params = self.slot["params"][i]
        if params is not None:
            int8, int4 = _layouts()
            layout = int4 if self.dtype == "int4" else int8
            t = layout.dequantize(t, params.to_device(t.device)).reshape(self.slot["shape"]).to(dtype)
        import comfy.utils

        return comfy.utils.repeat_to_batch_size(t, batch_size)

    @staticmethod
    def _slot_bytes(slot: dict) -> int:
        return sum(t.numel() * t.element_size() for t in slot["blocks"].values())


class ReleasedPoseBranchCache(PoseBranchCache):
    """The lookup 2.1's first releases shipped (``self.slots.remove(s)``): a hit behind an older slot raises."""

    def _find(self, key: torch.Tensor) -> dict | None:
        for s in self.slots:
            if s["key"].shape == key.shape and torch.equal(s["key"], key.to(s["key"].device)):
                self.slots.remove(s)
                return s
        return None


def select_prefix_cache(model, key: torch.Tensor, cache_bytes: int, device, options: dict):
    """(cache with the slot to read or fill selected, whether it is filled), or (None, False) to recompute."""
    if options.get("device") == "off":
        return None, False
    cache, memory = model.prefix_cache, model.cache_memory
    if cache is not None and cache.select(key, create=False):
        return cache, cache.filled(len(model.transformer_blocks))
    dtype = options.get("dtype", "default")
    cache_bytes //= {"int8": 2, "int4": 4}.get(dtype, 1)
    if cache is None:
        store = options.get("device", "auto")
        if store == "auto":
            if memory.patcher_free() > 4 * cache_bytes:
                store = device
            elif memory.pin_budget(cache_bytes):
                store = torch.device("cpu")
            else:
                return None, False
        else:
            store = device if store == "gpu" else torch.device("cpu")
        # the class the model's module imports, as upstream's ``PoseBranchCache(...)`` resolves it
        cache_class = sys.modules[type(model).__module__].PoseBranchCache
        cache = model.prefix_cache = cache_class(store_device=store, dtype=dtype, memory=memory)
    room = memory.patcher_free() > 2 * cache_bytes if cache.store_device == device else memory.pin_budget(cache_bytes)
    if not room:
        return None, False
    cache.select(key)
    return cache, False
