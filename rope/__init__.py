"""Pure-torch RoPE frequency schedules (DyPE, YaRN, NTK, PI) and rotation tables. Never imports ComfyUI."""

from .schedules import (
    METHODS,
    PositionSchedule,
    axis_frequencies,
    kappa,
    plain_frequencies,
    yarn_attention_scale,
)
from .tables import rotation_table

__all__ = [
    "METHODS",
    "PositionSchedule",
    "axis_frequencies",
    "kappa",
    "plain_frequencies",
    "rotation_table",
    "yarn_attention_scale",
]
