"""The two time shifts of flow-matching schedules, written once: each maps a time t in (0, 1] to a sigma.

exponential (FLUX.1's ``ModelSamplingFlux`` and diffusers' dynamic shift): σ = e^mu / (e^mu + 1/t - 1);
linear (AuraFlow / SD3 / discrete flow and diffusers' static shift): σ = shift·t / (1 + (shift - 1)·t).
HiFlow's base schedule (spectral/hiflow.py) and the Schedule Preview's curves (nodes/schedule_preview/curves.py)
both use them, each on its own grid of t.
"""

from __future__ import annotations

import math

import torch


def exponential_shift(t: torch.Tensor, mu: float) -> torch.Tensor:
    """σ = e^mu / (e^mu + 1/t - 1), in ``t``'s dtype (t > 0)."""
    e = math.exp(mu)
    return e / (e + (1.0 / t - 1.0))


def linear_shift(t: torch.Tensor, shift: float) -> torch.Tensor:
    """σ = shift·t / (1 + (shift - 1)·t), in ``t``'s dtype."""
    return shift * t / (1.0 + (shift - 1.0) * t)
