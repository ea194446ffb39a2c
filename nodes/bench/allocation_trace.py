"""The memory of code too large to run: traced op by op (a ``TorchDispatchMode``), typically on the meta device,
where tensors have shapes and no storage. Every storage an op creates (one none of its inputs has) counts as
allocated until it is freed (its storage object is collected); the peak and the sum of those bytes are reported.

What the mode cannot see is an op's own inner temporaries (inside an op the mode is off). One kind matters for
``create_block_mask``: a reduction whose input dtype is not its output's first copies the whole input to the output
dtype (torch 2.13 ``ATen/native/ReduceOpsUtils.h``, ``make_reduction``: ``self.to(in_dtype)``), e.g. the sum of its
boolean tokens x tokens mask into int64 tiles; it is counted here while the op runs. The bench checks the traced
peak against the allocator's record of a real build at a small size (hap_rows.py) before it prints a traced one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

#: reductions that copy a differently typed input first (their CUDA half / bfloat16 -> float32 case excepted)
CASTING_REDUCTIONS = (torch.ops.aten.sum.dim_IntList, torch.ops.aten.sum.default)


class AllocationTrace(TorchDispatchMode):
    """``peak``: the most bytes alive at once; ``total``: every byte allocated; ``live``: alive now."""

    def __init__(self) -> None:
        super().__init__()
        self.live = self.peak = self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        seen = {t.untyped_storage()._cdata for t in inputs}
        created = []
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.untyped_storage()._cdata not in seen:
                seen.add(t.untyped_storage()._cdata)
                created.append(t.untyped_storage())
        hidden = 0
        if func in CASTING_REDUCTIONS and inputs and inputs[0].dtype != out.dtype:
            hidden = inputs[0].numel() * out.element_size()
        added = sum(s.nbytes() for s in created)
        self.peak = max(self.peak, self.live + added + hidden)
        self.live += added
        self.total += added + hidden
        for storage in created:
            weakref.finalize(storage, self._free, storage.nbytes())
        return out

    def _free(self, nbytes: int) -> None:
        self.live -= nbytes


def traced(fn: Callable[[], object]) -> tuple[object, AllocationTrace]:
    """``fn()``'s result and the trace of what it allocated (what the result still holds stays in ``live``)."""
    trace = AllocationTrace()
    with trace:
        result = fn()
    return result, trace
