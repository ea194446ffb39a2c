"""Per spatial axis, what one model call does: the scale its positions use, SEGA-alone's NTK factor, the s of SEGA's
m_ref and whose temperatures it takes. This is where the SEGA recipe (spectral/recipes.py) meets a family and a
latent grid; ``axis_rules`` turns the plan into each axis's frequencies and temperatures, the one rule both the
engine (schedule.py, per model call) and the Schedule Preview (schedule_preview/curves.py, per step) run.

* With a DyPE node, positions are DyPE's: each axis its own scale (tokens / trained tokens), plain RoPE at or
  below 1. SEGA then only supplies temperatures, on the axes DyPE rescales.
* SEGA alone follows its recipe: "port" and "refined" static NTK per axis (the port's factor); "paper" the official
  code's factor with one s for both axes (Flux's rule, every family but Qwen-Image) or Qwen-Image's per-axis rule.
* Nothing above the trained size (every axis at or below 1, or, for "paper", the one s at or below 1): no plan,
  the call is stock.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...rope import (
    axis_frequencies,
    ntk_frequencies,
    official_ntk_factor,
    official_qwen_ntk_factors,
    plain_frequencies,
    yarn_temperature,
)
from ...spectral import NO_QUIRKS, axis_temperatures, recipe_rules, reference_temperature
from ..families import FamilyAdapter
from .config import PatchConfig


@dataclass(frozen=True)
class AxisPlan:
    column: int  # the id column of this spatial axis
    scale: float  # tokens on the axis / trained tokens: the scale the position schedule reads (<= 1: plain)
    base_tokens: float
    ntk_factor: float | None  # SEGA alone, "paper": the official NTK factor (1: plain); None: the schedule decides
    m_ref_scale: float  # s in SEGA's m_ref = s^kappa
    temperature_axis: int  # 0 / 1: the spatial axis whose temperatures this axis uses (Qwen-Image "paper": width)

    @property
    def rescaled(self) -> bool:
        return self.ntk_factor > 1.0 if self.ntk_factor is not None else self.scale > 1.0


def plan_call(config: PatchConfig, adapter: FamilyAdapter, grid: tuple[int, int]) -> tuple[AxisPlan, ...] | None:
    """The two spatial axes' plans for a generated latent of ``grid`` tokens, or None when nothing is rescaled."""
    sega = config.sega
    alone = sega is not None and config.positions is None
    rules = recipe_rules(sega.recipe) if sega is not None else None
    quirks = adapter.paper_quirks if sega is not None and sega.recipe == "paper" else NO_QUIRKS
    recipe_base = float(quirks.base_px) if alone and quirks.base_px else 0.0
    base_grid = adapter.base_grid(config.base_px(recipe_base), grid)
    scales = tuple(n / base for n, base in zip(grid, base_grid, strict=True))

    one_scale = rules is not None and rules.global_scale and not quirks.per_axis_scale
    m_ref_scales = (max(scales),) * 2 if one_scale else scales
    factors: tuple[float | None, ...] = (None, None)
    if alone and rules.official_ntk:
        dim = adapter.spatial_axis_dim()
        if quirks.per_axis_scale:
            factors = official_qwen_ntk_factors(scales[0], scales[1], dim)
        else:
            factor = official_ntk_factor(max(scales), dim)
            factors = (factor, factor)

    plans = tuple(
        AxisPlan(column=column, scale=scale, base_tokens=base, ntk_factor=factor, m_ref_scale=m_scale,
                 temperature_axis=1 if quirks.height_uses_width else index)
        for index, (column, scale, base, factor, m_scale) in enumerate(
            zip(adapter.spatial_axes, scales, base_grid, factors, m_ref_scales, strict=True))
    )
    return plans if any(plan.rescaled for plan in plans) else None


#: The reference codes switch SEGA off where m_ref does not exceed 1 (their ``base_mscale > 1 + 1e-8``).
REFERENCE_MIN_M_REF = 1.0 + 1e-8


def axis_rules(config: PatchConfig, plans: tuple[AxisPlan, ...], axes_dim, theta: float, t: torch.Tensor,
               spectrum=None, device: torch.device | None = None) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """Per planned axis, its float64 frequencies (R, pairs) and the temperature it uses ((R, pairs), None: 1), R the
    rows of ``t`` (flow times: a call's samples, or the preview's steps) or 1 where they do not depend on t.

    Not rescaled: the plain frequencies, no temperature. Rescaled: SEGA-alone's NTK factor or the position schedule at
    t; the temperature SEGA's (from ``spectrum``, one row per t; gated off where m_ref <= 1 except for "refined"),
    else YaRN's scalar for method yarn. An axis takes the temperatures of its ``temperature_axis``.
    """
    sega = config.sega
    positions = config.effective_positions
    freqs_per_axis, temperatures = [], []
    for plan, band_key in zip(plans, ("h", "w"), strict=True):
        dim = axes_dim[plan.column]
        temperature = None
        if not plan.rescaled:
            freqs = plain_frequencies(dim, theta, device)[None]
        elif plan.ntk_factor is not None:
            freqs = ntk_frequencies(dim, theta, plan.ntk_factor, device)[None]
        else:
            freqs = axis_frequencies(positions, dim, theta, plan.scale, plan.base_tokens, t)
        if plan.rescaled and sega is not None:
            m_ref = reference_temperature(plan.m_ref_scale, sega.kappa, sega.m_ref)
            if sega.recipe == "refined" or m_ref > REFERENCE_MIN_M_REF:
                temperature = axis_temperatures(freqs, getattr(spectrum, f"band_{band_key}"),
                                                getattr(spectrum, f"axis_{band_key}"), spectrum.spread,
                                                plan.m_ref_scale, sega, spectrum.valid)
        elif plan.rescaled and positions.method == "yarn":
            temperature = torch.full((1, dim // 2), yarn_temperature(plan.scale), dtype=torch.float64,
                                     device=device)
        freqs_per_axis.append(freqs)
        temperatures.append(temperature)
    return [(freqs, temperatures[plan.temperature_axis] if plan.rescaled else None)
            for plan, freqs in zip(plans, freqs_per_axis, strict=True)]
