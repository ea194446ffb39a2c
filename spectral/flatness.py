"""Spectral flatness (Wiener entropy) of a band-energy profile and SEGA's global amplitude, the spread."""

from __future__ import annotations

import torch

from .settings import SegaSettings


def spectral_flatness(energy: torch.Tensor, eps: float = 1e-8, mask: torch.Tensor | None = None) -> torch.Tensor:
    """SF = geometric mean / (arithmetic mean + eps) over the last dim, in [0, 1]; 1 = flat (noise-like).

    Energies are floored at ``eps`` first, as the port does. ``mask`` (bool, last dim) restricts both means to the
    bands that hold FFT samples, so an empty band on an odd grid does not read as "structured".
    """
    floored = energy.clamp(min=eps)
    if mask is None:
        geometric = floored.log().mean(dim=-1).exp()
        arithmetic = floored.mean(dim=-1)
    else:
        weight = mask.to(floored.dtype)
        count = weight.sum(dim=-1).clamp(min=1.0)
        geometric = ((floored.log() * weight).sum(dim=-1) / count).exp()
        arithmetic = (floored * weight).sum(dim=-1) / count
    return (geometric / (arithmetic + eps)).clamp(0.0, 1.0)


def spread_from_flatness(flatness: torch.Tensor, settings: SegaSettings) -> torch.Tensor:
    """spread = spread_min + (spread_max - spread_min) * (1 - (1 - c) ** spread_alpha), concentration c = 1 - SF."""
    concentration = 1.0 - flatness
    shaped = 1.0 - (1.0 - concentration) ** settings.spread_alpha
    return settings.spread_min + (settings.spread_max - settings.spread_min) * shaped


def spectral_spread(energy: torch.Tensor, settings: SegaSettings, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The spread of an energy profile (last dim = bands): flat spectrum -> spread_min, one dominant band -> spread_max."""
    return spread_from_flatness(spectral_flatness(energy, settings.eps, mask), settings)
