"""The rule every family follows: only the spatial columns are rescaled; time, text and index columns keep the model's
own frequencies.

A family's ids have one column per RoPE axis (``FamilyAdapter.axes_dim``); ``FamilyAdapter.spatial_axes`` names the
two that hold the generated image's rows and columns. Only those get the call's schedule (DyPE's positions, SEGA's or
YaRN's temperatures), and on those columns *every* token gets it, text and reference tokens included. Where a family
puts its text on the spatial columns (Qwen-Image's diagonal, Ovis/LongCat's sequential text, OmniGen2's caption), text
and image rotations are then both built from the same per-axis frequencies, so every text↔image phase difference
stays a function of the position difference, exactly as in the stock model. Every other column (Flux's index axis,
Flux.2's text axis, Lumina's caption axis, a video's time axis) keeps the model's plain frequencies at its theta.

Where the rule is applied, and nowhere else: the plan covers the spatial columns only (axis_plan.plan_call), an
ids table takes each column's frequencies from ``column_schedules``, and a table the model builds itself (Anima's
Cosmos module) keeps the model's pairs of every other column through ``keep_model_columns``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...rope import plain_frequencies
from .scopes import AxisSchedule


def column_schedules(axes_dim: Sequence[int], theta: float, spatial: tuple[AxisSchedule, ...], device: torch.device,
                     batch: int | None = None) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """Per id column: (float64 freqs (B_f, pairs), temperature or None): the call's schedule on the spatial columns,
    the model's plain frequencies on every other. With ``batch``, schedules of B rows for a call of k * B rows (a
    step's schedule on a CFG batch or concatenated conds) are repeated to ``batch`` rows."""
    by_column = {axis.column: axis for axis in spatial}
    schedules = []
    for column, dim in enumerate(axes_dim):
        axis = by_column.get(column)
        if axis is None:
            schedules.append((plain_frequencies(dim, theta, device)[None], None))
            continue
        freqs = axis.freqs.to(device)
        temperature = None if axis.temperature is None else axis.temperature.to(device)
        if batch is not None:
            freqs, temperature = _rows(freqs, batch), None if temperature is None else _rows(temperature, batch)
        schedules.append((freqs, temperature))
    return schedules


def _rows(value: torch.Tensor, batch: int) -> torch.Tensor:
    """``value`` (R, ...) for ``batch`` rows: as is when R is 1 or ``batch`` (broadcast) or does not divide it
    (broadcasting then decides, as for any schedule), else repeated (row j is row j mod R, calc_cond_batch's order)."""
    rows = value.shape[0]
    if rows in (1, batch) or batch % rows:
        return value
    return value.repeat(batch // rows, *([1] * (value.dim() - 1)))


def keep_model_columns(model_table: torch.Tensor, our_table: torch.Tensor, axes_dim: Sequence[int],
                       spatial_columns: Sequence[int], pair_dim: int) -> torch.Tensor:
    """A table whose pairs (along ``pair_dim``, column after column) are ours on the spatial columns and the model's
    own on every other: for a model that builds its table itself, with its own rule on those columns (Cosmos' time
    axis: its own theta and fps modulation)."""
    parts, start = [], 0
    for column, dim in enumerate(axes_dim):
        source = our_table if column in spatial_columns else model_table
        parts.append(source.narrow(pair_dim, start, dim // 2))
        start += dim // 2
    return torch.cat(parts, dim=pair_dim)
