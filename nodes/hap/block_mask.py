"""HAP's FlexAttention block mask, built from its 64-token blocks instead of from every (query, key) pair.

``create_block_mask`` (torch.nn.attention.flex_attention) evaluates the mask for every pair: eagerly that
materializes heads x tokens² booleans and integer intermediates (240 bytes a pair at FLUX.1's 24 heads: 64 GiB at
2048², 975 GiB at 4096²; ``python <pack> bench --only hap``); the official code compiles it instead
(zylwithxy/HRDiT e4aa8c6 ``hrdit/hap.py:63-65``, ``_compile=True``), which needs triton on CUDA. HAP's mask reads a
token only through its class: text, or its 64-token image block (masks.py). So the kept entries of every 128 x 128
tile are counted at the level of classes,

    counts = occupancy @ class_mask @ occupancyᵀ,

occupancy[tile, class] the tokens of that class in the tile, class_mask the mask between classes. A tile is full
when it keeps all 128² entries, partial when it keeps some, empty else; tokens past the sequence count as dropped,
as ``create_block_mask`` pads its mask with False (an edge tile is never full). The counts are whole numbers up
to 16384, exact in float32 (every factor of a product is a whole number up to 128, so TF32 matmuls are exact too;
and no float64, which some devices lack). The BlockMask is then made as ``create_block_mask`` makes it (its
``_dense_to_ordered``, then ``BlockMask.from_kv_blocks``): the identical BlockMask (tests/test_hap_block_mask.py
compares every tensor with eager ``create_block_mask``; the bench with the compiled one), without a compiler, in
memory that grows with the classes² (tokens² / 4096) and tiles², never with tokens².

Where every head has the same half-width (the shipped plan) the mask has one head, which FlexAttention broadcasts
over the query's heads: ``create_block_mask`` with H=1, the same blocks as every head of the official H=24 mask.
"""

from __future__ import annotations

import torch

from .masks import keeps, stride_of
from .scope_plan import BLOCK

TILE = 128  # FlexAttention's default sparse block (torch.nn.attention.flex_attention._DEFAULT_SPARSE_BLOCK_SIZE)


def mask_mod_of(text: int, half: tuple[int, ...], anchor: int, device: torch.device):
    """The official ``mask_mod`` (hrdit/hap.py) for ``text`` text tokens: per head ``half``, or one half-width for
    every head when they agree (no head index read: the mask broadcasts)."""
    stride = stride_of(anchor)
    if len(set(half)) == 1:
        return lambda b, h, q, k: keeps(q, k, text, half[0], stride)
    half_t = torch.tensor(half, dtype=torch.int64, device=device)
    return lambda b, h, q, k: keeps(q, k, text, half_t[h], stride)


def occupancy(tokens: int, text: int, device: torch.device) -> torch.Tensor:
    """(tiles, 1 + image blocks) float32: how many tokens of each class (the text, then each image block) each
    tile of 128 tokens holds."""
    blocks = -(-(tokens - text) // BLOCK)
    edges = torch.clamp(text + BLOCK * torch.arange(blocks + 1, device=device), max=tokens)
    starts = torch.cat([edges.new_zeros(1), edges[:-1]])  # class c spans [starts[c], ends[c])
    ends = torch.cat([edges.new_full((1,), text), edges[1:]])
    tile_start = TILE * torch.arange(-(-tokens // TILE), device=device)[:, None]
    tile_end = torch.clamp(tile_start + TILE, max=tokens)
    overlap = torch.minimum(tile_end, ends[None]) - torch.maximum(tile_start, starts[None])
    return overlap.clamp(min=0).to(torch.float32)


def class_mask(blocks: int, half: int, anchor: int, device: torch.device) -> torch.Tensor:
    """(1 + blocks)² float32: 1 where a query of one class keeps the keys of another (the text first)."""
    index = torch.arange(blocks, device=device)
    out = torch.ones(blocks + 1, blocks + 1, dtype=torch.float32, device=device)
    near = (index[:, None] - index[None, :]).abs() <= half
    out[1:, 1:] = near | (torch.remainder(index, stride_of(anchor)) == 0)[None]  # the mask_mod of two blocks
    return out


def tile_states(tokens: int, text: int, half: int, anchor: int,
                device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(partial, full) int8 (tiles, tiles): the tiles that keep some but not all of their 128 x 128 entries, and
    those that keep all."""
    occ = occupancy(tokens, text, device)
    counts = (occ @ class_mask(occ.shape[1] - 1, half, anchor, device)) @ occ.T
    full = counts == TILE * TILE
    return ((counts > 0) & ~full).to(torch.int8), full.to(torch.int8)


def _ordered(dense: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """create_block_mask's order (its ``_dense_to_ordered``): per row of tiles how many, and their columns first
    (ascending), then the others (a stable descending argsort)."""
    dense = dense.to(torch.int32)
    columns = torch.argsort(dense, dim=-1, descending=True, stable=True)
    return dense.sum(-1).to(torch.int32), columns.to(torch.int32)


def hap_block_mask(tokens: int, text: int, half: tuple[int, ...], anchor: int, device: torch.device):
    """HAP's BlockMask over ``tokens`` (``text`` first) on ``device``: one head (broadcast) when every head of
    ``half`` has the same half-width, else one per head. Equal to ``create_block_mask(mask_mod, None, H, tokens,
    tokens, device)`` with the official ``mask_mod``."""
    from torch.nn.attention.flex_attention import BlockMask

    heads = (half[0],) if len(set(half)) == 1 else half
    states = {width: tile_states(tokens, text, width, anchor, device) for width in set(heads)}
    partial = torch.stack([states[width][0] for width in heads])[None]
    full = torch.stack([states[width][1] for width in heads])[None]
    return BlockMask.from_kv_blocks(*_ordered(partial), *_ordered(full), BLOCK_SIZE=(TILE, TILE),
                                    mask_mod=mask_mod_of(text, half, anchor, device), seq_lengths=(tokens, tokens))
