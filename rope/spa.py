"""SPA (Spatial Position Alignment, HRDiT, arXiv 2608.07003) as numbers: token positions -> bundle positions.

The official code (github zylwithxy/HRDiT at e4aa8c6, ``hrdit/spa.py``) maps each image token's row and column id
to a bundle id before the rotary table is built, for a set of mappings whose bundle boundaries slide, and the
attention is averaged over them (nodes/rope_patch/spa.py builds the tables, nodes/rope_patch/spa_attention.py
averages). Per axis, with ``size`` tokens per bundle and the first boundary at ``first``:

    phi(x) = 0                               for x < first
    phi(x) = ceil((x + 1 - first) / size)    otherwise

``size = max(1, ceil(max_index / (group_num - 1)))``, ``max_index`` the largest id on the axis (tokens - 1 for
ComfyUI's ids). The variants, in the official order: (size, size), then (n, size) for n = 1 .. size - 1, then
(size, m) for m = 1 .. size - 1, each pair being (first row boundary, first column boundary). At 4096² on FLUX.1
(256 tokens a side, group_num 80): size 4, 7 variants; at 2048²: size 2, 3 variants.
"""

from __future__ import annotations

import math

import torch


def bundle_size(tokens: int, group_num: int) -> int:
    """Tokens per bundle on an axis of ``tokens`` tokens (ids 0 .. tokens - 1)."""
    if group_num < 2:
        raise ValueError(f"SPA's group_num must be at least 2 (bundles per axis), got {group_num}.")
    if tokens < 1:
        raise ValueError(f"SPA needs at least one token on an axis, got {tokens}.")
    return max(1, math.ceil((tokens - 1) / (group_num - 1)))


def bundle_positions(positions: torch.Tensor, first: int, size: int) -> torch.Tensor:
    """phi: the bundle id of each position (float64 ``positions``), for bundles of ``size`` whose first boundary is
    ``first``."""
    bundled = torch.ceil((positions + 1 - first) / size)
    return torch.where(positions < first, torch.zeros_like(positions), bundled)


def variant_boundaries(row_size: int, col_size: int) -> list[tuple[int, int]]:
    """The (first row boundary, first column boundary) of each variant, in the official order."""
    variants = [(row_size, col_size)]
    variants += [(n, col_size) for n in range(1, row_size)]
    variants += [(row_size, m) for m in range(1, col_size)]
    return variants


def variant_count(rows: int, cols: int, group_num: int) -> int:
    """How many tables (and attention passes) SPA runs on a grid of rows x cols tokens."""
    return len(variant_boundaries(bundle_size(rows, group_num), bundle_size(cols, group_num)))


def bundled_ids(ids: torch.Tensor, columns: tuple[int, int], grid: tuple[int, int], group_num: int,
                device: torch.device | None) -> list[torch.Tensor]:
    """Each variant's ids (float64 on ``device``, ``ids``' shape): the row and column columns bundled, every other
    column as is. ``device`` is where the caller's float64 rule puts them (nodes/rope_patch/devices.py; None:
    where ``ids`` are).

    Every token's spatial ids are mapped (a text token at 0 stays 0: every first boundary is at least 1), so the
    ids of the whole sequence go in, as the model builds them.
    """
    row_column, col_column = columns
    row_size, col_size = bundle_size(grid[0], group_num), bundle_size(grid[1], group_num)
    ids = ids.to(device=device, dtype=torch.float64)
    out = []
    for first_row, first_col in variant_boundaries(row_size, col_size):
        variant = ids.clone()
        variant[..., row_column] = bundle_positions(ids[..., row_column], first_row, row_size)
        variant[..., col_column] = bundle_positions(ids[..., col_column], first_col, col_size)
        out.append(variant)
    return out
