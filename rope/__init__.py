"""Pure-torch RoPE frequency schedules (DyPE, YaRN, NTK, PI) and rotation tables. Never imports ComfyUI."""

from .schedules import (
    METHODS,
    PositionSchedule,
    axis_frequencies,
    kappa,
    plain_frequencies,
    yarn_attention_scale,
)
from .tables import gather_tables, rotation_table, window_index, window_positions, window_radius

__all__ = [
    "METHODS",
    "PositionSchedule",
    "axis_frequencies",
    "kappa",
    "plain_frequencies",
    "gather_tables",
    "rotation_table",
    "window_index",
    "window_positions",
    "window_radius",
    "yarn_attention_scale",
]
