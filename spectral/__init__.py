"""SEGA (Spectral-Energy Guided Attention, arXiv 2605.22668) in pure torch: per-step spectral profiles of the
latent and per-RoPE-pair attention temperatures, plus the "HF energy" evaluation metric (spectral/hf_energy.py).
Never imports ComfyUI. The package exports what the rest of the pack uses; the parts live in their modules. Its
float64 is made on the ``device`` the caller hands down: the pack's rule (nodes/rope_patch/devices.py).

Per step, for each spatial axis with resolution ratio ``s``::

    spectrum = latent_spectrum(x_t, patch_size, settings, device)  # per sample, no host read; float64 on device
    m_h = axis_temperatures(freqs_h, spectrum.band_h, spectrum.axis_h, spectrum.spread, s, settings, spectrum.valid)
"""

from __future__ import annotations

from typing import Any

from .recipes import NO_QUIRKS, RULES, PaperQuirks, recipe_from_label, recipe_rules
from .settings import ALLOCATIONS, MAX_ALPHA, RECIPES, REFERENCE_RULES, SegaSettings, reference_temperature

__all__ = [
    "ALLOCATIONS",
    "MAX_ALPHA",
    "NO_QUIRKS",
    "PaperQuirks",
    "RECIPES",
    "REFERENCE_RULES",
    "RULES",
    "SegaSettings",
    "axis_temperatures",
    "latent_spectrum",
    "recipe_from_label",
    "recipe_rules",
    "reference_temperature",
    "token_map_spectrum",
]


def __getattr__(name: str) -> Any:
    """The torch parts, imported on first use: the settings and recipes above import no torch, so a command's
    ``--help`` and usage errors (its parser reads them) come before torch (``python <pack> COMMAND``)."""
    if name == "axis_temperatures":
        from .allocation import axis_temperatures

        return axis_temperatures
    if name == "latent_spectrum":
        from .profiles import latent_spectrum

        return latent_spectrum
    if name == "token_map_spectrum":
        from .token_grid import token_map_spectrum

        return token_map_spectrum
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
