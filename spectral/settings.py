"""SEGA hyper-parameters and the reference attention temperature m_ref."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Allocation = Literal["rank", "frequency"]
ReferenceRule = Literal["power", "yarn"]
Recipe = Literal["paper", "port", "refined"]

ALLOCATIONS: tuple[str, ...] = ("rank", "frequency")
REFERENCE_RULES: tuple[str, ...] = ("power", "yarn")
#: Which code SEGA reproduces (spectral/recipes.py says what each one means); the first is the default.
RECIPES: tuple[str, ...] = ("paper", "port", "refined")

#: Largest alpha that keeps every temperature positive: the centred tanh term satisfies |s_d| <= 2 (n - 1) / n < 2
#: and spread <= 1, so 1 - alpha spread s_d >= 1 / n > 0 for alpha <= 0.5 (the port's default is 0.15).
MAX_ALPHA = 0.5


@dataclass(frozen=True)
class SegaSettings:
    """SEGA (arXiv 2605.22668) parameters. Immutable: shared by model clones, safe as a cache key.

    * ``kappa``: exponent of the reference temperature ``m_ref = s ** kappa`` (``m_ref="power"``).
    * ``alpha``: how far a pair's temperature may move away from ``m_ref`` (``m_d = m_ref (1 - alpha spread s_d)``);
      at most :data:`MAX_ALPHA`, which keeps every ``m_d > 0``.
    * ``beta``: sharpness of the ``tanh`` applied to the standardized log band energy.
    * ``spread_min``/``spread_max``/``spread_alpha``: map spectral concentration to the global amplitude, the spread.
    * ``floor``: lower bound on every ``m_d`` (the port's ``min_mscale``, 1.0), in every case, fallbacks included;
      0 disables it (the temperatures then average exactly to ``m_ref``).
    * ``eps``: energy floor before logs and the denominators' guard (the port's 1e-8).
    * ``allocation``: where a pair reads the band energy. ``"rank"`` (the port): pairs spread over the bands by
      their min-max normalized log period. ``"frequency"`` (ours): each pair reads the band holding its own
      frequency in cycles per token.
    * ``m_ref``: the mean temperature per axis. ``"power"`` (the port and the paper): ``s ** kappa``. ``"yarn"``:
      YaRN's ``0.1 ln s + 1``, DyPE's scalar temperature, so SEGA only redistributes it.
    * ``recipe``: which code the spectrum, the temperatures and SEGA-alone positions reproduce (:mod:`spectral.recipes`):
      ``"paper"`` the SEGA authors' official code, ``"port"`` the diffusers port, ``"refined"`` ours.
    """

    kappa: float = 0.08
    alpha: float = 0.15
    beta: float = 1.5
    spread_min: float = 0.0
    spread_max: float = 1.0
    spread_alpha: float = 1.5
    floor: float = 1.0
    eps: float = 1e-8
    allocation: Allocation = "rank"
    m_ref: ReferenceRule = "power"
    recipe: Recipe = "paper"

    def __post_init__(self) -> None:
        for name in ("kappa", "alpha", "beta", "spread_min", "spread_max", "spread_alpha", "floor", "eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"SegaSettings.{name} must be a finite number, got {value!r}.")
        for name in ("kappa", "alpha", "beta", "floor"):
            if getattr(self, name) < 0:
                raise ValueError(f"SegaSettings.{name} must be >= 0, got {getattr(self, name)!r}.")
        if self.alpha > MAX_ALPHA:
            raise ValueError(
                f"SegaSettings.alpha must be <= {MAX_ALPHA} (larger values can make a pair's temperature negative), "
                f"got {self.alpha!r}."
            )
        if self.allocation not in ALLOCATIONS:
            raise ValueError(f"SegaSettings.allocation must be one of {', '.join(ALLOCATIONS)}, got {self.allocation!r}.")
        if self.recipe not in RECIPES:
            raise ValueError(f"SegaSettings.recipe must be one of {', '.join(RECIPES)}, got {self.recipe!r}.")
        if self.m_ref not in REFERENCE_RULES:
            raise ValueError(f"SegaSettings.m_ref must be one of {', '.join(REFERENCE_RULES)}, got {self.m_ref!r}.")
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


def reference_temperature(scale: float, kappa: float, rule: ReferenceRule = "power") -> float:
    """m_ref for a per-axis resolution ratio ``scale`` (1 at or below 1).

    ``"power"``: ``max(scale, 1) ** kappa`` (the port, the paper). ``"yarn"``: ``0.1 ln max(scale, 1) + 1``, YaRN's
    temperature (``kappa`` unused).
    """
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"The resolution ratio must be a finite number > 0, got {scale!r}.")
    if not math.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa!r}.")
    if rule == "yarn":
        return 0.1 * math.log(max(float(scale), 1.0)) + 1.0
    if rule != "power":
        raise ValueError(f"Unknown m_ref rule {rule!r}; expected one of {', '.join(REFERENCE_RULES)}.")
    return max(float(scale), 1.0) ** float(kappa)
