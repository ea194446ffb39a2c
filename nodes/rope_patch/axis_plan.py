"""Per spatial axis, what one model call does: the scale its positions use, SEGA-alone's NTK factor, the s of SEGA's
m_ref and whose temperatures it takes. This is where the SEGA recipe (spectral/recipes.py) meets a family and a
latent grid; the frequencies and temperatures themselves are built in schedule.py.

* With a DyPE node, positions are DyPE's: each axis its own scale (tokens / trained tokens), plain RoPE at or
  below 1. SEGA then only supplies temperatures, on the axes DyPE rescales.
* SEGA alone follows its recipe: "port" and "refined" static NTK per axis (the port's factor); "paper" the official
  code's factor with one s for both axes (Flux's rule, every family but Qwen-Image) or Qwen-Image's per-axis rule.
* Nothing above the trained size (every axis at or below 1, or, for "paper", the one s at or below 1): no plan,
  the call is stock.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...rope import official_ntk_factor, official_qwen_ntk_factors
from ...spectral import NO_QUIRKS, recipe_rules
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
