"""Pure-torch RoPE frequency schedules (DyPE, YaRN, NTK, PI) and rotation tables. Never imports ComfyUI.

The names of the rules (``METHODS``, ``THRESHOLD_RULES``) import no torch; the rest is imported on first use, so a
command's ``--help`` and usage errors come before torch (``python <pack> COMMAND``)."""

from __future__ import annotations

import importlib
from typing import Any

from .methods import METHODS, THRESHOLD_RULES

#: name -> the module that defines it (imported on first use: each needs torch)
_TORCH_PARTS = {
    "PositionSchedule": "schedules",
    "axis_frequencies": "schedules",
    "kappa": "schedules",
    "plain_frequencies": "schedules",
    "yarn_temperature": "schedules",
    "rotation_table": "rotation",
    "ntk_frequencies": "sega_ntk",
    "official_ntk_factor": "sega_ntk",
    "official_qwen_ntk_factors": "sega_ntk",
}

__all__ = ["METHODS", "THRESHOLD_RULES", *_TORCH_PARTS]


def __getattr__(name: str) -> Any:
    module = _TORCH_PARTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
