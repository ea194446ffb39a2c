"""Independent float64 references of the two SEGA codes, written from reading them (no code copied, nothing from
the pack imported), for the recipe tests.

* ``official``: the SEGA authors' inference code, repository rajabi2001/sega: ``flux_sega/transformer_flux.py``
  (``FluxTransformer2DModel.forward``, ``FluxPosEmbed``, ``get_1d_rotary_pos_embed``, ``compute_*``) and
  ``qwen_sega/transformer_qwenimage.py`` (``QwenImageTransformer2DModel.forward``, ``QwenEmbedRope.compute_mscale``).
* ``port``: the diffusers port, smellslikeml/diffusers ``src/diffusers/hooks/dype.py`` (``_DyPEPosEmbed`` with
  ``method="sega"``, ``_feed_spectral_data``), per sample (see docs/differences.md).

Everything is float64 except the two places where the codes' float32 arithmetic makes a discrete choice that
float64 would make differently: the axis bins (``float32 linspace * n``, then truncation) and the radial rings
(float32 radius, truncation). Those are evaluated in float32, as there. ``dtype=torch.float32`` runs the rest in
float32 too, which measures the float32/float64 gap the tests' tolerances are built on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

EPS = 1e-8
THETA = 10000.0


@dataclass(frozen=True)
class Knobs:
    """The codes' SEGA parameters (their defaults)."""

    alpha: float = 0.15  # mscale_alpha / sega_alpha
    beta: float = 1.5
    kappa: float = 0.08  # base_mscale_coefficient with "power_res" / sega_kappa
    min_mscale: float = 1.0
    spread_min: float = 0.0
    spread_max: float = 1.0
    spread_alpha: float = 1.5


# ---------------------------------------------------------------- spectra of a (rows, cols) token map


def _bins_axis(length: int, n_bins: int) -> torch.Tensor:
    fraction = torch.linspace(0.0, 1.0, length // 2 + 1, dtype=torch.float32)
    return torch.clamp((fraction * n_bins).long(), 0, n_bins - 1)


def _bins_radial(rows: int, cols: int, n_bins: int) -> torch.Tensor:
    yy, xx = torch.meshgrid(torch.arange(rows, dtype=torch.float32) - rows / 2.0,
                            torch.arange(cols, dtype=torch.float32) - cols / 2.0, indexing="ij")
    radius = torch.sqrt(yy**2 + xx**2)
    radius = radius / (radius.max() + 1e-8)
    return torch.clamp((radius * n_bins).long(), 0, n_bins - 1).flatten()


def _binned(values: torch.Tensor, bins: torch.Tensor, n_bins: int) -> torch.Tensor:
    total = torch.zeros(n_bins, dtype=values.dtype).scatter_add_(0, bins, values)
    count = torch.zeros(n_bins, dtype=values.dtype).scatter_add_(0, bins, torch.ones_like(values))
    return total / (count + 1e-8)


def axis_profiles(token_map: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``compute_axis_spectral_profiles`` on a (rows, cols) map (mean already taken over batch and channels)."""
    rows, cols = token_map.shape
    centred = token_map - token_map.mean()
    out = []
    for axis, length in ((0, rows), (1, cols)):
        power = torch.fft.fft(centred, dim=axis).abs().pow(2).mean(dim=1 - axis)[: length // 2 + 1]
        n_bins = max(length // 2, 8)
        out.append(_binned(power, _bins_axis(length, n_bins), n_bins))
    return out[0], out[1]


def radial_profile(token_map: torch.Tensor) -> torch.Tensor:
    """``compute_spectral_energy_profile``: ``max(rows, cols) // 2`` rings of the fftshifted power."""
    rows, cols = token_map.shape
    centred = token_map - token_map.mean()
    power = torch.fft.fftshift(torch.fft.fft2(centred)).abs().pow(2).flatten()
    n_bins = max(rows, cols) // 2
    return _binned(power, _bins_radial(rows, cols, n_bins), n_bins)


def dynamic_spread(radial: torch.Tensor, knobs: Knobs) -> float:
    """``compute_dynamic_spread``: flatness of every ring (empty ones at the floor) -> concentration -> sigma."""
    energy = radial.clamp(min=EPS)
    flatness = float((torch.exp(torch.log(energy).mean()) / (energy.mean() + EPS)).clamp(0.0, 1.0))
    concentration = 1.0 - flatness
    return knobs.spread_min + (knobs.spread_max - knobs.spread_min) * (1.0 - (1.0 - concentration) ** knobs.spread_alpha)


def allocation(profile: torch.Tensor, freqs: torch.Tensor, m_ref: float, spread: float, knobs: Knobs) -> torch.Tensor:
    """``compute_sega_allocation``: per-pair m (float64 here; the codes round it to float32)."""
    if spread <= 0.0 or knobs.alpha <= 0.0:
        return torch.full(freqs.shape, m_ref, dtype=freqs.dtype)
    log_period = torch.log(2.0 * math.pi / freqs.clamp(min=EPS))
    low, high = log_period.min(), log_period.max()
    normalised = (log_period - low) / (high - low) if float(high - low) > 1e-6 else torch.zeros_like(log_period)
    n_bins = profile.shape[0]
    position = (1.0 - normalised) * (n_bins - 1)
    lower = position.floor().long().clamp(0, n_bins - 1)
    upper = (lower + 1).clamp(0, n_bins - 1)
    frac = (position - lower.to(position.dtype)).clamp(0.0, 1.0)
    log_energy = torch.log(profile.to(freqs.dtype).clamp(min=EPS))
    raw = log_energy[lower] * (1.0 - frac) + log_energy[upper] * frac
    z = raw - raw.mean()
    z = z / z.std().clamp(min=EPS)
    s = torch.tanh(knobs.beta * z)
    s = s - s.mean()
    return (m_ref * (1.0 - knobs.alpha * spread * s)).clamp(min=knobs.min_mscale)


def ntk(dim: int, factor: float, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return 1.0 / (THETA * factor) ** (torch.arange(0, dim, 2, dtype=dtype) / dim)


def plain(dim: int) -> torch.Tensor:
    return 1.0 / THETA ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


# ---------------------------------------------------------------- what each code does in one transformer call


@dataclass(frozen=True)
class AxisRule:
    """Per spatial axis: the angular frequencies (28,) and the per-pair temperature (28,) or None (magnitude 1)."""

    freqs: torch.Tensor
    m: torch.Tensor | None


def official_flux(embedded: torch.Tensor, rows: int, cols: int, train_px: int, knobs: Knobs = Knobs(),
                  dim: int = 56, dtype: torch.dtype = torch.float64) -> tuple[AxisRule, AxisRule] | None:
    """``flux_sega`` for image tokens ``embedded`` (B, rows * cols, D), the output of ``x_embedder``."""
    s = max(rows, cols) * 16 / train_px
    factor = s ** (2 * dim / (dim - 2)) / (1 + 0.1 * math.log(s))
    if factor <= 1.0:
        return None
    token_map = embedded.to(dtype).mean(dim=(0, -1)).reshape(rows, cols)
    profile_h, profile_w = axis_profiles(token_map)
    spread = dynamic_spread(radial_profile(token_map), knobs)
    freqs = ntk(dim, factor, dtype).to(torch.float64)
    m_ref = max(s, 1.0) ** knobs.kappa
    rules = []
    for profile in (profile_h, profile_w):
        if spread > 0.0 and m_ref > 1.0 + 1e-8:
            m = allocation(profile, ntk(dim, factor, dtype), m_ref, spread, knobs).to(torch.float64)
        else:
            m = torch.full((dim // 2,), m_ref, dtype=torch.float64)
        rules.append(AxisRule(freqs, m))
    return rules[0], rules[1]


def official_qwen(embedded: torch.Tensor, rows: int, cols: int, train_px: int, knobs: Knobs = Knobs(),
                  dim: int = 56, dtype: torch.dtype = torch.float64) -> tuple[AxisRule, AxisRule] | None:
    """``qwen_sega`` (``QwenEmbedRope``) for image tokens ``embedded`` (B, rows * cols, D), the output of ``img_in``."""
    s_h, s_w = rows * 16 / train_px, cols * 16 / train_px
    factor_h = s_h ** (2 * dim / (dim - 2)) / (1 + 0.1 * math.log(s_h)) if s_h > 1.0 else 1.0
    factor_w = s_w ** (2 * dim / (dim - 2)) / (1 + 0.1 * math.log(s_w)) if s_w > 1.0 else 1.0
    big, small = max(s_h, s_w), min(s_h, s_w)
    if big > 1.0 and small > 0.0 and abs(s_h - s_w) > 1e-8:
        factor_big = max(factor_h, factor_w)
        factor_small = 1.0 + (small / big) * max(0.0, factor_big - 1.0)
        factor_h, factor_w = (factor_small, factor_big) if s_h < s_w else (factor_big, factor_small)
    if max(factor_h, factor_w) <= 1.0:
        return None
    token_map = embedded.to(dtype).mean(dim=(0, -1)).reshape(rows, cols)
    _, profile_w = axis_profiles(token_map)
    spread = dynamic_spread(radial_profile(token_map), knobs)
    m_w = None
    if factor_w > 1.0:  # the width axis's temperatures ...
        m_ref_w = max(s_w, 1.0) ** knobs.kappa
        if spread > 0.0 and m_ref_w > 1.0 + 1e-8:
            m_w = allocation(profile_w, ntk(dim, factor_w, dtype), m_ref_w, spread, knobs).to(torch.float64)
        else:
            m_w = torch.full((dim // 2,), m_ref_w, dtype=torch.float64)
    freqs_h = ntk(dim, factor_h) if factor_h > 1.0 else plain(dim)
    freqs_w = ntk(dim, factor_w) if factor_w > 1.0 else plain(dim)
    return AxisRule(freqs_h, m_w), AxisRule(freqs_w, m_w)  # ... are the height axis's too (``mscale_h = mscale_w``)


def port_sample(packed: torch.Tensor, rows: int, cols: int, train_px: int = 1024, knobs: Knobs = Knobs(),
                dim: int = 56, dtype: torch.dtype = torch.float64) -> tuple[AxisRule, AxisRule] | None:
    """The port's ``method="sega"`` for ONE sample's packed latent tokens ``packed`` (rows * cols, 64)."""
    base = train_px // 16
    if rows <= base and cols <= base:
        return None
    token_map = packed.to(dtype).mean(dim=-1).reshape(rows, cols)
    profile_h, profile_w = axis_profiles(token_map)
    spread = dynamic_spread(radial_profile(token_map), knobs)
    rules = []
    for n, profile in ((rows, profile_h), (cols, profile_w)):
        if n <= base:
            rules.append(AxisRule(plain(dim), None))
            continue
        scale = n / base
        freqs = ntk(dim, scale ** (dim / (dim - 2)))
        m_ref = max(n * 16 / train_px, 1.0) ** knobs.kappa
        if m_ref <= 1.0 + 1e-8:
            m = None
        elif spread <= 0.0:
            m = torch.full((dim // 2,), m_ref, dtype=torch.float64)
        else:
            m = allocation(profile, ntk(dim, scale ** (dim / (dim - 2)), dtype), m_ref, spread, knobs)
            m = m.to(torch.float64)
        rules.append(AxisRule(freqs, m))
    return rules[0], rules[1]


def table(ids: torch.Tensor, rules: tuple[AxisRule, AxisRule] | None, axes_dim=(16, 56, 56)) -> torch.Tensor:
    """(N, pairs, 2) float64 [cos, sin] * m for ids (N, 3): column 0 plain, columns 1-2 by ``rules``."""
    parts = []
    for column, dim in enumerate(axes_dim):
        rule = None if column == 0 or rules is None else rules[column - 1]
        freqs = plain(dim) if rule is None else rule.freqs
        angles = ids[:, column].to(torch.float64)[:, None] * freqs[None, :]
        m = 1.0 if rule is None or rule.m is None else rule.m[None, :]
        parts.append(torch.stack([torch.cos(angles) * m, torch.sin(angles) * m], dim=-1))
    return torch.cat(parts, dim=1)


def packed_tokens(latent: torch.Tensor, patch: int = 2) -> torch.Tensor:
    """(C, H, W) -> (H/p * W/p, C * p * p), features (c, ph, pw): Flux's and Qwen-Image's packing."""
    c, h, w = latent.shape
    return latent.reshape(c, h // patch, patch, w // patch, patch).permute(1, 3, 0, 2, 4).reshape(-1, c * patch * patch)


def port_ntk_factor(scale: float, axis_dim: int) -> float:
    """The diffusers port's static NTK factor per axis: ``s ** (d / (d - 2))`` above the trained size, else 1."""
    return scale ** (axis_dim / (axis_dim - 2)) if scale > 1.0 else 1.0


def exact_axis_bin_index(length: int, n_bins: int) -> torch.Tensor:
    """The codes' axis-bin assignment in exact integer arithmetic, ``floor(k n / (length // 2))``: what their
    float32 ``linspace`` quirk changes."""
    half = length // 2
    k = torch.arange(half + 1, dtype=torch.int64)
    return (k * n_bins // max(half, 1)).clamp(max=n_bins - 1)

