"""HAP's mask (hrdit/hap.py ``mask_mod``, zylwithxy/HRDiT e4aa8c6) and how many entries it keeps.

Tokens are the text first, then the image in raster order (ComfyUI's Flux, as diffusers'). With ``text`` text
tokens, a query q attends a key k when any of these holds:

* q is a text token (text queries attend everything), or k is one (every query sees the text);
* their 64-token image blocks qb = (q − text) // 64 and kb = (k − text) // 64 are at most the head's half-width
  apart (the head's scope, scope_plan.py);
* kb is a multiple of the anchor stride (every N-th block globally visible). The official code turns the anchor
  off with a stride of 2³⁰, so block 0 stays visible even then; ``stride`` 0 here does the same.

The official code counts the first 512 tokens as text (``TEXT_LEN``, its fixed prompt length); here ``text`` is the
call's own text length, the same with the official 512-token prompts (docs/hrdit.md).
"""

from __future__ import annotations

import torch

from .scope_plan import BLOCK, ScopePlan

ANCHOR_OFF = 1 << 30  # the official stride for "no anchor"


def stride_of(anchor: int) -> int:
    return anchor if anchor > 0 else ANCHOR_OFF


def keeps(q: torch.Tensor, k: torch.Tensor, text: int, half: int | torch.Tensor, stride: int) -> torch.Tensor:
    """Whether query positions ``q`` keep key positions ``k`` (broadcast): the official ``mask_mod``'s rule, with
    ``half`` the head's half-width and ``stride`` the anchor stride (``stride_of``)."""
    qb = torch.div(q - text, BLOCK, rounding_mode="floor")
    kb = torch.div(k - text, BLOCK, rounding_mode="floor")
    return (q < text) | (k < text) | ((qb - kb).abs() <= half) | (torch.remainder(kb, stride) == 0)


def keep_mask(rows: torch.Tensor, cols: torch.Tensor, text: int, half: torch.Tensor, anchor: int) -> torch.Tensor:
    """(heads, len(rows), len(cols)) bool: which (query, key) entries each head keeps. ``half`` (heads,) int."""
    q = rows.to(torch.int64)[None, :, None]
    k = cols.to(torch.int64)[None, None, :]
    return keeps(q, k, text, half.to(torch.int64)[:, None, None], stride_of(anchor))


def kept_entries(tokens: int, text: int, half: int, anchor: int) -> int:
    """How many of the tokens² (query, key) entries one head with half-width ``half`` keeps, counted per block."""
    image = tokens - text
    blocks = -(-image // BLOCK)
    sizes = torch.full((blocks,), BLOCK, dtype=torch.int64)
    if image % BLOCK:
        sizes[-1] = image % BLOCK
    index = torch.arange(blocks)
    near = (index[:, None] - index[None, :]).abs() <= half
    visible = torch.remainder(index, stride_of(anchor)) == 0
    kept_keys = ((near | visible[None, :]).to(torch.int64) * sizes[None, :]).sum(1)  # image keys per query block
    image_to_image = int((kept_keys * sizes).sum())
    return text * tokens + image * text + image_to_image


def kept_share(plan: ScopePlan, layers: int, heads: int, tokens: int, text: int, anchor: int) -> float:
    """The share of the tokens² attention entries HAP keeps, averaged over every layer and head of a model with
    ``layers`` x ``heads``: what its attention FLOPs are multiplied by."""
    counts: dict[int, int] = {}
    total = 0
    for layer in range(layers):
        for half in plan.half_widths(layer, heads, tokens):
            if half not in counts:
                counts[half] = kept_entries(tokens, text, half, anchor)
            total += counts[half]
    return total / (layers * heads * tokens * tokens)
