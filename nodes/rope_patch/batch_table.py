"""How many rows a call's table has, for the models that take one table for the whole batch.

Most families build batched ids and take one table row per sample. Some call their embedder with batch-1 ids and
apply its table to every sample (``FamilyAdapter.table_batch``): Anima (Cosmos), Nunchaku FLUX (its blocks assert a
table batch of 1) and Qwen-Image 2.1 (one (1, N, 1, ...) table for its fused ``rms_rope``, which also takes one per
sample). For those the call's schedule is given as one row wherever it is one: frequencies depend only on sigma,
which ComfyUI's samplers give every sample of a batch alike, so the first row is every row. SEGA's temperatures come
from each image's own spectrum (SEGA alone with the "paper" recipe: one spectrum and static positions for the batch)
and then differ by row: a model that takes one table cannot be given them, and says so.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ..families import UnsupportedModelError
from ..families.base import ONE_TABLE, PER_SAMPLE
from .scopes import AxisSchedule, CallScope


def one_row(axes: tuple[AxisSchedule, ...]) -> tuple[AxisSchedule, ...] | None:
    """The axes' schedules as one row (the frequencies' first), or None where a temperature differs by sample."""
    if any(axis.temperature is not None and axis.temperature.shape[0] > 1 for axis in axes):
        return None
    return tuple(replace(axis, freqs=axis.freqs[:1]) for axis in axes)


def table_rows(ids: torch.Tensor, scope: CallScope) -> tuple[torch.Tensor, tuple[AxisSchedule, ...]]:
    """(ids, axes) for this call's table: batch-1 ids and one-row axes where the model takes one table and the
    schedule is one row; else ids with a row per sample of the call (batch-1 ids expanded to it)."""
    axes = scope.axes
    if scope.table_batch != PER_SAMPLE:
        shared = one_row(axes)
        if shared is not None and ids.shape[0] == 1:
            return ids, shared
        if shared is None and scope.table_batch == ONE_TABLE:
            rows = max(axis.temperature.shape[0] for axis in axes if axis.temperature is not None)
            raise per_image_temperatures_error(scope.family, rows)
    if ids.shape[0] == 1 and scope.batch > 1:  # one ids row for the call's samples: one table row per sample
        ids = ids.expand(scope.batch, *ids.shape[1:])
    return ids, axes


def per_image_temperatures_error(family: str, rows: int) -> UnsupportedModelError:
    """SEGA's per-image temperatures for a model that applies one rotary table to every image of a batch."""
    return UnsupportedModelError(
        f"DyPE/SEGA: {family} applies one rotary table to every image of a batch, but SEGA computes its "
        f"temperatures per image ({rows} rows here). Sample with batch size 1 (queue several runs "
        "instead), use SEGA Attention alone with its recipe 'paper' (static positions and one spectrum for the whole "
        "batch), or use DyPE Patch Model without SEGA.")
