"""What the SEGA behaviour tests share: the exact zero-sum settings, their m_ref at scale 4, NTK frequencies, seeded
latents and one call of the allocation per axis."""

from __future__ import annotations

from pathlib import Path

import torch

from spectral import SegaSettings, latent_spectrum, reference_temperature
from spectral.allocation import pair_temperatures

PACK = Path(__file__).resolve().parents[1]
SETTINGS = SegaSettings(floor=0.0)  # the exact zero-sum variant: properties below are exact, not clamped
M_REF = reference_temperature(4.0, SETTINGS.kappa)


def ntk_freqs(scale: float = 4.0, dim: int = 56, theta: float = 10000.0) -> torch.Tensor:
    return 1.0 / (theta * scale ** (dim / (dim - 2))) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def random_latent(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def axis_scales(latent: torch.Tensor, patch: int, freqs: torch.Tensor, settings: SegaSettings = SETTINGS):
    spectrum = latent_spectrum(latent, patch, settings)
    m_h = pair_temperatures(freqs, spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, settings, spectrum.valid)
    m_w = pair_temperatures(freqs, spectrum.band_w, spectrum.axis_w, spectrum.spread, M_REF, settings, spectrum.valid)
    return spectrum, m_h, m_w
