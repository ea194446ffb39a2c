"""Pure-torch RoPE frequency schedules (DyPE, YaRN, NTK, PI) and rotation tables. Never imports ComfyUI."""

from .rotation import rotation_table
from .schedules import (
    METHODS,
    THRESHOLD_RULES,
    PositionSchedule,
    axis_frequencies,
    kappa,
    plain_frequencies,
    yarn_temperature,
)
from .sega_ntk import ntk_frequencies, official_ntk_factor, official_qwen_ntk_factors

__all__ = [
    "METHODS",
    "PositionSchedule",
    "THRESHOLD_RULES",
    "axis_frequencies",
    "kappa",
    "ntk_frequencies",
    "official_ntk_factor",
    "official_qwen_ntk_factors",
    "plain_frequencies",
    "rotation_table",
    "yarn_temperature",
]
