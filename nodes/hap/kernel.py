"""HAP's attention: exact softmax attention over the entries the mask keeps (masks.py), per layer and head.

Two ways to run it, the same numbers (within float32 noise; tests/test_hap.py checks both against dense attention
restricted to the kept entries):

* FlexAttention (``torch.nn.attention.flex_attention``), compiled, with a block mask: what the official code runs,
  and the one that skips the pruned blocks' work. The default on CUDA.
* masked dense attention, a chunk of queries at a time (PyTorch SDPA with a boolean mask): the default elsewhere.
  It computes every entry and discards the pruned ones, so it saves no time; its memory is bounded by the chunk.

Block masks depend only on shapes and the plan; they live in the pack's one shape cache (spectral/shape_cache.py),
released when ComfyUI frees memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ...spectral.shape_cache import TABLES
from .masks import keep_mask, stride_of
from .scope_plan import BLOCK, ScopePlan

CHUNK_ENTRIES = 1 << 24  # mask entries (heads x query rows x keys) per chunk of the masked dense path


def sdpa_attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor,
                scale: float | None) -> torch.Tensor:
    """The masked path's default inner attention: PyTorch SDPA with a boolean keep mask."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


def masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, text: int, half: tuple[int, ...],
                     anchor: int, scale: float | None, attend: Callable | None = None) -> torch.Tensor:
    """(B, H, N, D) attention of q over the kept keys, masked dense, a chunk of query rows at a time; each chunk
    through ``attend(q_rows, k, v, keep_mask, scale) -> (B, H, rows, D)`` (None: PyTorch SDPA)."""
    attend = attend or sdpa_attend
    heads, tokens = q.shape[1], q.shape[2]
    half_t = torch.tensor(half, dtype=torch.int64, device=q.device)
    cols = torch.arange(tokens, device=q.device)
    rows_per_chunk = max(1, CHUNK_ENTRIES // max(1, heads * tokens))
    outs = []
    for start in range(0, tokens, rows_per_chunk):
        rows = cols[start:start + rows_per_chunk]
        mask = keep_mask(rows, cols, text, half_t, anchor)[None]
        outs.append(attend(q[:, :, rows], k, v, mask, scale))
    return torch.cat(outs, dim=2)


@functools.lru_cache(maxsize=1)
def _compiled_flex() -> Callable:
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=False)


def flex_available() -> bool:
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: F401
    except ImportError:
        return False
    return True


def _block_mask(tokens: int, text: int, half: tuple[int, ...], anchor: int, device: torch.device):
    from torch.nn.attention.flex_attention import create_block_mask

    half_t = torch.tensor(half, dtype=torch.int64, device=device)
    stride = stride_of(anchor)

    def mask_mod(b, h, q, k):
        qb = torch.div(q - text, BLOCK, rounding_mode="floor")
        kb = torch.div(k - text, BLOCK, rounding_mode="floor")
        return (q < text) | (k < text) | ((qb - kb).abs() <= half_t[h]) | (torch.remainder(kb, stride) == 0)

    mask = create_block_mask(mask_mod, B=None, H=len(half), Q_LEN=tokens, KV_LEN=tokens, device=device)
    return (*[t for t in mask.as_tuple() if isinstance(t, torch.Tensor)], mask)  # tensors first: cache counts them


def flex_hap_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, text: int, half: tuple[int, ...],
                       anchor: int, scale: float | None, compiled: bool = True) -> torch.Tensor:
    """(B, H, N, D) attention over the kept entries with FlexAttention and a cached block mask."""
    from torch.nn.attention.flex_attention import flex_attention

    tokens = q.shape[2]
    key = ("hap_block_mask", tokens, text, half, anchor, q.device)
    mask = TABLES.get(key, lambda: _block_mask(tokens, text, half, anchor, q.device))[-1]
    run = _compiled_flex() if compiled else flex_attention
    return run(q, k, v, block_mask=mask, scale=scale)


def hap_kernel(plan: ScopePlan, anchor: int, flex: bool | None = None) -> Callable:
    """The attention kernel of an AttentionPlan (nodes/rope_patch/spa.py): HAP with ``plan`` and the anchor
    stride. ``flex`` None: FlexAttention on CUDA, masked dense elsewhere; True / False force one (tests). The
    kernel's ``attend`` is the masked path's inner attention (masked_attention); FlexAttention does not use it."""

    def kernel(q, k, v, heads, call, kwargs, attend: Callable | None = None):
        batch, heads, tokens, dim = q.shape
        image = call.grid[0] * call.grid[1]
        text = tokens - image
        if text < 0:
            raise ValueError(f"HAP: the attention has {tokens} tokens, fewer than the {image} image tokens of the "
                             f"{call.grid[0]}x{call.grid[1]} grid.")
        layer = call.layer(kwargs.get("transformer_options") or {})
        half = plan.half_widths(layer, heads, tokens)
        scale = kwargs.get("scale")
        use_flex = q.is_cuda and flex_available() if flex is None else flex
        if use_flex:
            out = flex_hap_attention(q, k, v, text, half, anchor, scale, compiled=q.is_cuda)
        else:
            out = masked_attention(q, k, v, text, half, anchor, scale, attend)
        if kwargs.get("skip_output_reshape"):
            return out
        return out.transpose(1, 2).reshape(batch, tokens, heads * dim)

    kernel.plan = plan
    kernel.anchor = anchor
    return kernel
