"""SEGA hyper-parameters and the reference attention temperature m_ref."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SegaSettings:
    """SEGA (arXiv 2605.22668) parameters. Immutable: shared by model clones, safe as a cache key.

    * ``kappa``: exponent of the reference temperature ``m_ref = s ** kappa``.
    * ``alpha``: how far a pair's temperature may move away from ``m_ref`` (``m_d = m_ref (1 - alpha sigma s_d)``).
    * ``beta``: sharpness of the ``tanh`` applied to the standardized log band energy.
    * ``spread_min``/``spread_max``/``spread_alpha``: map spectral concentration to the global amplitude sigma.
    * ``floor``: lower bound on every ``m_d`` (``min_mscale``); 0 disables the clamp.
    * ``eps``: energy floor before logs and the denominators' guard (the port's 1e-8).
    """

    kappa: float = 0.08
    alpha: float = 0.15
    beta: float = 1.5
    spread_min: float = 0.0
    spread_max: float = 1.0
    spread_alpha: float = 1.5
    floor: float = 0.0
    eps: float = 1e-8

    def __post_init__(self) -> None:
        for name in ("kappa", "alpha", "beta", "spread_min", "spread_max", "spread_alpha", "floor", "eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"SegaSettings.{name} must be a finite number, got {value!r}.")
        for name in ("kappa", "alpha", "beta", "floor"):
            if getattr(self, name) < 0:
                raise ValueError(f"SegaSettings.{name} must be >= 0, got {getattr(self, name)!r}.")
        if self.spread_alpha <= 0:
            raise ValueError(f"SegaSettings.spread_alpha must be > 0, got {self.spread_alpha!r}.")
        if self.eps <= 0:
            raise ValueError(f"SegaSettings.eps must be > 0, got {self.eps!r}.")
        if not 0.0 <= self.spread_min <= 1.0:
            raise ValueError(f"SegaSettings.spread_min must lie in [0, 1], got {self.spread_min!r}.")
        if not 0.0 <= self.spread_max <= 1.0:
            raise ValueError(f"SegaSettings.spread_max must lie in [0, 1], got {self.spread_max!r}.")
        if self.spread_min > self.spread_max:
            raise ValueError(
                f"SegaSettings.spread_min ({self.spread_min!r}) must not exceed spread_max ({self.spread_max!r})."
            )


def reference_temperature(scale: float, kappa: float) -> float:
    """m_ref = max(scale, 1) ** kappa: the power-law temperature for a per-axis resolution ratio ``scale``."""
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"The resolution ratio must be a finite number > 0, got {scale!r}.")
    if not math.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa!r}.")
    return max(float(scale), 1.0) ** float(kappa)
