"""The largest tensor a piece of code creates, seen op by op through a ``TorchDispatchMode``: each op's outputs
whose storage none of its inputs has. The ops' own inner temporaries are not seen (the mode is off inside an op),
so it is a lower bound of what the code holds at once: enough to tell tiles² or a chunk from tokens²."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class LargestAllocation(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage()._cdata for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.untyped_storage()._cdata not in inputs:
                self.largest = max(self.largest, t.untyped_storage().nbytes())
        return out


def largest_allocation(run: Callable[[], object]) -> int:
    """Bytes of the largest storage ``run`` creates."""
    mode = LargestAllocation()
    with mode:
        run()
    return mode.largest
