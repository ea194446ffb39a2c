"""SEGA (Spectral-Energy Guided Attention, arXiv 2605.22668) in pure torch: per-step spectral profiles of the
latent and per-RoPE-pair attention temperatures, plus the "HF energy" evaluation metric. Never imports ComfyUI.

Per step, for each spatial axis with resolution ratio ``s``::

    spectrum = latent_spectrum(x_t, patch_size, settings)          # per sample, no host sync
    m_h = axis_temperatures(freqs_h, spectrum.band_h, spectrum.axis_h, spectrum.spread, s, settings, spectrum.valid)
"""

from .allocation import (
    axis_temperatures,
    band_positions,
    centred_tanh,
    log_energy_at,
    pair_scales,
    port_bin_positions,
    port_pair_scales,
    standardize,
    temperatures,
)
from .bands import axis_band_centres, axis_band_count, axis_bin_index, radial_band_count, radial_bin_index
from .flatness import spectral_flatness, spectral_spread, spread_from_flatness
from .hf_energy import laplacian_variance
from .profiles import LatentSpectrum, axis_profile, channel_map, latent_spectrum, power_spectrum, radial_profile
from .recipes import NO_QUIRKS, RULES, PaperQuirks, RecipeRules, recipe_from_label, recipe_rules
from .settings import ALLOCATIONS, MAX_ALPHA, RECIPES, REFERENCE_RULES, SegaSettings, reference_temperature
from .token_grid import token_map_spectrum

__all__ = [
    "ALLOCATIONS",
    "LatentSpectrum",
    "MAX_ALPHA",
    "NO_QUIRKS",
    "PaperQuirks",
    "RECIPES",
    "RULES",
    "RecipeRules",
    "REFERENCE_RULES",
    "SegaSettings",
    "axis_band_centres",
    "axis_band_count",
    "axis_bin_index",
    "axis_profile",
    "axis_temperatures",
    "band_positions",
    "centred_tanh",
    "channel_map",
    "laplacian_variance",
    "latent_spectrum",
    "log_energy_at",
    "pair_scales",
    "port_bin_positions",
    "port_pair_scales",
    "power_spectrum",
    "radial_band_count",
    "radial_bin_index",
    "radial_profile",
    "recipe_from_label",
    "recipe_rules",
    "reference_temperature",
    "spectral_flatness",
    "spectral_spread",
    "spread_from_flatness",
    "standardize",
    "temperatures",
    "token_map_spectrum",
]
