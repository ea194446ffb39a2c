"""The rotary table of one embedder call from its ids and the call's schedule: every token's cos/sin in float64
(rope/rotation.py's formula, per token), exact for any ids and differentiable."""

from __future__ import annotations

import torch

from ...rope import rotation_table
from .devices import math_device
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
