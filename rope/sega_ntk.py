"""The static NTK positions SEGA uses without DyPE, as each SEGA code defines them (float64 frequencies).

* The diffusers port: per axis, ``theta * s ** (d / (d - 2))``: the static NTK of rope/schedules.py.
* The SEGA authors' official code: ``theta * s ** (2d / (d - 2)) / (1 + 0.1 ln s)`` (:func:`official_ntk_factor`,
  3.7x the port's factor at s = 4, d = 56), with one s for both axes on Flux; its Qwen-Image code takes s per axis
  and gives the smaller axis ``1 + (small / big) (ntk_big - 1)`` (:func:`official_qwen_ntk_factors`).

Factors are Python floats computed from shapes (no tensor, no sync) with the codes' own operation order, so the
frequencies agree with them to the last bit where they are float64 (the official Flux code; its Qwen-Image code
builds them in float32).
"""

from __future__ import annotations

import math

import torch


def official_ntk_factor(scale: float, axis_dim: int) -> float:
    """``s ** (2d / (d - 2)) / (1 + 0.1 ln s)``; 1 (no scaling) where that is not above 1, as the code tests."""
    if scale <= 0 or not math.isfinite(scale):
        raise ValueError(f"The resolution ratio must be a finite number > 0, got {scale!r}.")
    factor = scale ** (2 * axis_dim / (axis_dim - 2)) / (1 + 0.1 * math.log(scale))
    return factor if factor > 1.0 else 1.0


def official_qwen_ntk_factors(scale_h: float, scale_w: float, axis_dim: int) -> tuple[float, float]:
    """The official Qwen-Image code's per-axis factors: each axis ``official_ntk_factor`` (1 at or below its trained
    size); when the two scales differ, the smaller axis instead gets ``1 + (small / big) * (ntk_big - 1)``."""
    factors = [official_ntk_factor(s, axis_dim) if s > 1.0 else 1.0 for s in (scale_h, scale_w)]
    big, small = max(scale_h, scale_w), min(scale_h, scale_w)
    if big > 1.0 and small > 0.0 and abs(scale_h - scale_w) > 1e-8:
        ntk_big = max(factors)
        ntk_small = 1.0 + (small / big) * max(0.0, ntk_big - 1.0)
        factors = [ntk_small, ntk_big] if scale_h < scale_w else [ntk_big, ntk_small]
    return factors[0], factors[1]


def ntk_frequencies(axis_dim: int, theta: float, factor: float, device: torch.device | None = None) -> torch.Tensor:
    """``1 / (theta * factor) ** (2k / d)`` for k < d / 2, float64 (the base raised to float64 exponents)."""
    if axis_dim <= 0 or axis_dim % 2:
        raise ValueError(f"A RoPE axis needs an even, positive dimension; got {axis_dim}.")
    exponents = torch.arange(0, axis_dim, 2, dtype=torch.float64, device=device) / axis_dim
    return 1.0 / (float(theta) * float(factor)) ** exponents
