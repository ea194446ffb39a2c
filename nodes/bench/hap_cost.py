"""What HAP's attention costs, as a share of the dense tokens² attention: the entries its mask keeps, and the
128 x 128 tiles FlexAttention computes.

FlexAttention (torch.nn.attention.flex_attention, the official HRDiT code's kernel, zylwithxy/HRDiT e4aa8c6
hrdit/hap.py ``create_block_mask`` with its default ``BLOCK_SIZE``, and the pack's on CUDA: nodes/hap/kernel.py)
splits the attention into tiles of ``_DEFAULT_SPARSE_BLOCK_SIZE`` = 128 queries x 128 keys (torch 2.13) and computes
every tile that holds a kept entry whole, the pruned entries in it included; only empty tiles are skipped. So a GPU
runs the tile share, above the kept-entry share. Both are counted per block here, never over a tokens² mask: the
tile count by interval arithmetic over each tile's 64-token HAP blocks (nodes/hap/masks.py states the mask).
"""

from __future__ import annotations

import functools

import torch

from ..hap.masks import kept_share, stride_of
from ..hap.scope_plan import BLOCK, ScopePlan
from .model_flops import BLOCKS, HEADS

TILE = 128  # FlexAttention's default block size (torch/nn/attention/flex_attention.py _DEFAULT_SPARSE_BLOCK_SIZE)


def kept_tiles(tokens: int, text: int, half: int, anchor: int, tile: int = TILE) -> int:
    """How many of the ceil(tokens / tile)² tiles of one head with half-width ``half`` hold a kept entry.

    A tile whose queries or keys include a text token holds one (text rows and columns are kept). Otherwise its
    queries span the image blocks [q0, q1] and its keys [k0, k1]: it holds a kept entry when the two intervals are
    at most ``half`` blocks apart, or a multiple of the anchor stride lies in [k0, k1]."""
    starts = torch.arange(0, tokens, tile, dtype=torch.int64)
    ends = torch.clamp(starts + tile, max=tokens) - 1  # last token of each tile
    has_text = starts < text
    first = torch.div(torch.clamp(starts, min=text) - text, BLOCK, rounding_mode="floor")
    last = torch.div(ends - text, BLOCK, rounding_mode="floor")
    q0, q1, k0, k1 = first[:, None], last[:, None], first[None, :], last[None, :]
    gap = torch.clamp(torch.maximum(k0 - q1, q0 - k1), min=0)  # blocks between the two intervals
    stride = stride_of(anchor)
    anchored = torch.div(k1, stride, rounding_mode="floor") * stride >= k0
    kept = has_text[:, None] | has_text[None, :] | (gap <= half) | anchored
    return int(kept.sum())


def tile_share(plan: ScopePlan, layers: int, heads: int, tokens: int, text: int, anchor: int,
               tile: int = TILE) -> float:
    """The share of the attention FlexAttention computes (whole tiles), averaged over every layer and head; the
    same tile count times tile² over tokens² (a partial last tile counts as computed whole)."""
    counts: dict[int, int] = {}
    total = 0
    for layer in range(layers):
        for half in plan.half_widths(layer, heads, tokens):
            if half not in counts:
                counts[half] = kept_tiles(tokens, text, half, anchor, tile)
            total += counts[half]
    return total * tile * tile / (layers * heads * tokens * tokens)


@functools.cache
def hap_share(plan: ScopePlan, anchor: int, tokens: int, text: int, tiles: bool = False) -> float:
    """HAP's share at FLUX.1-dev's 57 layers x 24 heads: of the kept entries, or (``tiles``) of the whole tiles."""
    if tiles:
        return tile_share(plan, BLOCKS, HEADS, tokens, text, anchor)
    return kept_share(plan, BLOCKS, HEADS, tokens, text, anchor)
