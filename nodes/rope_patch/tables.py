"""The rotary table of one embedder call from its ids and the call's schedule: every token's cos/sin (the stock
formula, ``embed_ids``) or, once the ids are known to fit the window, gathered from the window (``embed_ids_checked``).

The window path is exact by construction: when the ids of a call are integers inside ``[-r, r]`` (Flux, Qwen and the
other image families number their tokens that way), cos/sin are evaluated once per window position and axis and every
token's entries are gathered: the same float64 angles and float32 roundings as evaluating every token, so the same
bits, for 256 + 512 text rows of trig instead of 66k tokens at 4096². Whether the ids *are* in the window is never
assumed: ids_check.py says when a call may gather and what a miss does.
"""

from __future__ import annotations

import torch

from ...rope import gather_tables, rotation_table, window_index, window_positions
from .devices import math_device
from .ids_check import WindowFlag, reads_free
from .scopes import AxisSchedule
from .spatial_only import column_schedules


def embed_ids(ids: torch.Tensor, axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...],
              unsqueeze_dim: int = 1, device: torch.device | None = None) -> torch.Tensor:
    """The family's pe layout, float32, with the spatial axes' schedules applied to every token on those columns.

    ``ids`` is (B, N, n_columns) in any dtype; the table is (B, N, pairs, 2, 2) with ``unsqueeze_dim`` inserted:
    1 gives EmbedND's (B, 1, N, pairs, 2, 2), 2 HiDream's (B, N, 1, pairs, 2, 2). Every token's cos/sin evaluated
    (the stock formula).
    """
    device = device or math_device(ids.device)
    schedules = column_schedules(axes_dim, theta, spatial, device, ids.shape[0])
    tables = [rotation_table(ids[..., column].to(device), freqs, temperature)
              for column, (freqs, temperature) in enumerate(schedules)]
    batch = max(table.shape[0] for table in tables)
    table = torch.cat([t.expand(batch, *t.shape[1:]) for t in tables], dim=-3)
    return table.unsqueeze(unsqueeze_dim).to(ids.device)


def embed_ids_checked(ids: torch.Tensor, axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...],
                      radius: int, gather: bool, unsqueeze_dim: int = 1,
                      device: torch.device | None = None) -> tuple[torch.Tensor, WindowFlag]:
    """``embed_ids``' table and what was done: the 0-d bool device flag "some id is not an integer in
    ``[-radius, radius]``", whether the table was gathered, whether ids moved (ids_check.py).

    With ``gather`` the table is gathered from cos/sin at the window positions (bit-identical when the flag is
    false) unless that cannot be exact or would change the gradient:
    * the flag is readable for free (a CPU flag, eager) and says an id missed: the stock formula instead;
    * the table carries a gradient (grad enabled, a schedule or the ids require grad: SEGA's temperatures of a
      latent that requires grad): the stock formula, so the gradient is the per-token formula's, bit for bit.
    Without ``gather`` it is ``embed_ids``' (the stock formula, exact always).
    """
    device = device or math_device(ids.device)
    schedules = column_schedules(axes_dim, theta, spatial, device)
    on_device = ids.to(device)
    indices, misses = zip(*(window_index(on_device[..., column], radius) for column in range(len(schedules))),
                          strict=True)
    missed = torch.stack(misses).any()
    if gather and _carries_gradient(ids, schedules):
        gather = False
    verified = moved = False
    if gather and reads_free(missed):
        moved = bool(missed)
        verified = not moved
    if not gather or moved:
        return embed_ids(ids, axes_dim, theta, spatial, unsqueeze_dim, device), WindowFlag(missed, False, moved)
    window = window_positions(radius, device)
    parts = [(rotation_table(window, freqs, temperature), index)
             for (freqs, temperature), index in zip(schedules, indices, strict=True)]
    table = gather_tables(parts).unsqueeze(unsqueeze_dim).to(ids.device)
    return table, WindowFlag(missed, True, False, verified)


def _carries_gradient(ids: torch.Tensor, schedules: list) -> bool:
    """The table would be part of an autograd graph (metadata only: no tensor value is read)."""
    if not torch.is_grad_enabled():
        return False
    tensors = [ids] + [t for pair in schedules for t in pair if t is not None]
    return any(t.requires_grad for t in tensors)
