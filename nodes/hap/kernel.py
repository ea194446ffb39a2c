"""HAP's attention: exact softmax attention over the entries the mask keeps (masks.py), per layer and head.

Two ways to run it, the same numbers (within float32 noise; tests/test_hrdit_math.py checks both against dense
attention restricted to the kept entries):

* FlexAttention (``torch.nn.attention.flex_attention``), compiled, with a block mask (block_mask.py): what the
  official code runs. Only where it compiles: on CUDA with triton (never eager on CUDA, which would materialize
  the whole score matrix).
* blockwise attention (blockwise.py): each chunk of image queries attends only its kept keys through ``attend``
  (PyTorch SDPA unless given): on the CPU and other devices, and on CUDA without triton (one log line says why).

Block masks and chunk plans depend only on shapes and the plan; they live in the pack's one shape cache
(spectral/shape_cache.py), released when ComfyUI frees memory.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable

import torch

from ...spectral.shape_cache import TABLES
from .block_mask import hap_block_mask
from .blockwise import Attend, masked_attention
from .scope_plan import ScopePlan

logger = logging.getLogger(__name__)

__all__ = ["flex_available", "flex_function", "flex_hap_attention", "flex_runs_here", "hap_kernel", "masked_attention",
           "triton_available"]


@functools.lru_cache(maxsize=1)
def _compiled_flex() -> Callable:
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=False)


@functools.cache
def flex_available() -> bool:
    try:
        from torch.nn.attention.flex_attention import BlockMask, flex_attention  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def triton_available() -> bool:
    """What inductor checks before it compiles for a GPU (torch 2.13 ``torch._inductor.scheduler.Scheduler
    .create_backend`` raises ``TritonMissing`` / ``GPUTooOldForTriton`` when it is false, at the compiled function's
    first call): ``torch.utils._triton.has_triton()``, the triton package and a device it supports (CUDA:
    compute capability 7.0 or newer). Asked once."""
    try:
        from torch.utils._triton import has_triton
    except ImportError:
        return False
    return bool(has_triton())


@functools.cache
def _say_why_not_flex() -> None:
    """One line, the first time CUDA runs HAP without triton."""
    major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (7, 0)
    instead = "HAP runs its exact blockwise attention instead (the same result, slower)"
    if major < 7:
        logger.warning("HRDiT HAP: FlexAttention cannot compile on this CUDA device: its compute capability %d.%d "
                       "is older than triton supports (7.0; torch.utils._triton.has_triton() is False). %s.",
                       major, minor, instead)
        return
    package = "triton-windows" if sys.platform == "win32" else "triton"
    logger.warning("HRDiT HAP: torch finds no usable triton (torch.utils._triton.has_triton() is False), so "
                   "FlexAttention cannot compile on this CUDA device; %s. To run HAP as FlexAttention, install "
                   "triton in ComfyUI's Python: pip install %s.", instead, package)


def flex_runs_here(device: torch.device) -> bool:
    """FlexAttention where it runs compiled: CUDA with triton."""
    if device.type != "cuda" or not flex_available():
        return False
    if triton_available():
        return True
    _say_why_not_flex()
    return False


def flex_function(device: torch.device, compiled: bool) -> Callable:
    """The compiled FlexAttention, or (``compiled`` False, tests) the eager one, never on CUDA."""
    from torch.nn.attention.flex_attention import flex_attention

    return _compiled_flex() if compiled or device.type == "cuda" else flex_attention


def flex_hap_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, text: int, half: tuple[int, ...],
                       anchor: int, scale: float | None, compiled: bool = True) -> torch.Tensor:
    """(B, H, N, D) attention over the kept entries with FlexAttention and a cached block mask. ``compiled`` False
    (tests) runs it eagerly, off CUDA only."""
    tokens = q.shape[2]
    key = ("hap_block_mask", tokens, text, half, anchor, q.device)

    def build() -> tuple:
        mask = hap_block_mask(tokens, text, half, anchor, q.device)
        return (*[t for t in mask.as_tuple() if isinstance(t, torch.Tensor)], mask)  # tensors first: cache counts them

    mask = TABLES.get(key, build)[-1]
    return flex_function(q.device, compiled)(q, k, v, block_mask=mask, scale=scale)


def hap_kernel(plan: ScopePlan, anchor: int, flex: bool | None = None, attend: Attend | None = None) -> Callable:
    """The attention kernel of an AttentionPlan (nodes/rope_patch/spa.py): HAP with ``plan`` and the anchor
    stride. ``flex`` None: FlexAttention where it compiles (CUDA with triton), blockwise elsewhere; True / False
    force one (tests). ``attend(q, k, v, mask, scale)``: the blockwise path's attention (blockwise.py; default
    PyTorch SDPA), also accepted per call as the kernel's keyword ``attend``."""

    def kernel(q, k, v, heads, call, kwargs, attend: Attend | None = attend):
        batch, heads, tokens, dim = q.shape
        image = call.grid[0] * call.grid[1]
        text = tokens - image
        if text < 0:
            raise ValueError(f"HAP: the attention has {tokens} tokens, fewer than the {image} image tokens of the "
                             f"{call.grid[0]}x{call.grid[1]} grid.")
        layer = call.layer(kwargs.get("transformer_options") or {})
        half = plan.half_widths(layer, heads, tokens)
        scale = kwargs.get("scale")
        if flex_runs_here(q.device) if flex is None else flex:
            out = flex_hap_attention(q, k, v, text, half, anchor, scale, compiled=q.is_cuda)
        else:
            out = masked_attention(q, k, v, text, half, anchor, scale, attend)
        if kwargs.get("skip_output_reshape"):
            return out
        return out.transpose(1, 2).reshape(batch, tokens, heads * dim)

    kernel.plan = plan
    kernel.anchor = anchor
    return kernel
