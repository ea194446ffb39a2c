"""Geometry of the spectral bands: which FFT sample of the latent grid falls in which band, in cycles per token.

The FFT runs on the latent grid, which is ``patch_size`` times finer than the token grid that RoPE positions count.
FFT index ``k`` on a latent axis of length ``L`` is ``f = k * patch_size / L`` cycles per token. A RoPE pair with
angular frequency ``omega`` (radians per token position) encodes ``omega / (2 pi)`` cycles per token, and token
positions can only represent ``|f| <= 0.5`` (the token-grid Nyquist), so the default band limit is 0.5.

Bin indices are computed with exact integer arithmetic (a float floor puts samples that lie exactly on a band edge
into the lower band). Everything depends only on shapes, so the tables are cached per shape and device
(shape_cache.py: bounded in bytes, released when ComfyUI frees memory). Counts and centres are float64, made on the
``device`` the caller hands down (the pack's rule, nodes/rope_patch/devices.py; None: the CPU).
"""

from __future__ import annotations

import math
from fractions import Fraction

import torch

from .shape_cache import TABLES


def axis_band_count(length: int, patch_size: int) -> int:
    """Bands on one axis: one per non-negative token frequency step, the Nyquist sample merged into the last band.

    ``floor(L / (2 patch))`` equals the port's ``max(tokens // 2, 8)`` for 16 tokens or more; unlike that rule it
    never leaves a band without an FFT sample on small grids.
    """
    return max(length // (2 * patch_size), 1)


def radial_band_count(height: int, width: int, patch_size: int) -> int:
    """Radial bands: the port's ``max(h_tokens, w_tokens) // 2`` (at least 1)."""
    return max(max(height // patch_size, width // patch_size) // 2, 1)


def _limit(band_limit: float) -> Fraction:
    limit = Fraction(band_limit)
    if limit <= 0:
        raise ValueError(f"band_limit must be > 0 cycles per token, got {band_limit!r}.")
    return limit


def _check(length: int, patch_size: int, n_bins: int) -> None:
    if length < 1 or patch_size < 1 or n_bins < 1:
        raise ValueError(f"Need length, patch_size and n_bins >= 1; got {length}, {patch_size}, {n_bins}.")


def axis_max_index(length: int, patch_size: int, band_limit: float = 0.5) -> int:
    """Largest non-negative FFT index ``k`` with ``k * patch / L <= band_limit`` (and ``k <= L // 2``)."""
    limit = _limit(band_limit)
    return min((limit.numerator * length) // (patch_size * limit.denominator), length // 2)


def axis_bin_index(
    length: int, patch_size: int, n_bins: int, band_limit: float = 0.5, device: torch.device | None = None
) -> torch.Tensor:
    """Band of each non-negative FFT index ``k = 0..K`` (int64), ``K = axis_max_index``, the last harmonic inside
    the band limit.

    ``bin = min(floor(n_bins * k / K), n_bins - 1)``: the harmonics 0..K spread evenly over the bands, so with the
    default count (:func:`axis_band_count`) band j holds harmonic j and the last band also the ones above it, for
    odd and even lengths alike. (Dividing the frequency range instead would, whenever ``L / (2 patch)`` is not an
    integer (135 tokens), put harmonic 1 into band 0 with the zero-frequency sample and shift every band by one.)
    Negative frequencies carry the same power as their mirror (real input), so they are left out.
    """
    _check(length, patch_size, n_bins)
    top = axis_max_index(length, patch_size, band_limit)
    k = torch.arange(top + 1, dtype=torch.int64, device=device)
    return (n_bins * k // max(top, 1)).clamp(max=n_bins - 1)


def axis_band_centres(
    length: int, patch_size: int, n_bins: int, band_limit: float = 0.5, device: torch.device | None = None
) -> torch.Tensor:
    """Centre of each axis band in cycles per token: the mean frequency of its FFT samples (float64).

    A band without samples (only possible with a hand-picked ``n_bins``) gets its nominal centre, so the centres
    are always strictly increasing.
    """
    index = axis_bin_index(length, patch_size, n_bins, band_limit, device)
    freqs = torch.arange(index.numel(), dtype=torch.float64, device=device) * (patch_size / length)
    total = torch.zeros(n_bins, dtype=torch.float64, device=device).index_add_(0, index, freqs)
    counts = _band_counts(index, n_bins, device)
    nominal = (torch.arange(n_bins, dtype=torch.float64, device=device) + 0.5) * (float(band_limit) / n_bins)
    return torch.where(counts > 0, total / counts.clamp(min=1), nominal)


def _band_counts(index: torch.Tensor, n_slots: int, device: torch.device | None) -> torch.Tensor:
    """Samples per band (float64 on ``device``, where ``index`` is). ``index_add_`` rather than ``bincount``: its
    output size never depends on the data."""
    ones = torch.ones(index.shape, dtype=torch.float64, device=device)
    return torch.zeros(n_slots, dtype=torch.float64, device=device).index_add_(0, index, ones)


def _signed_indices(length: int, device: torch.device | None) -> torch.Tensor:
    """FFT index -> signed frequency index (``fftfreq(L) * L``) as int64."""
    k = torch.arange(length, dtype=torch.int64, device=device)
    return torch.where(k < (length + 1) // 2, k, k - length)


def radial_bin_index(
    height: int,
    width: int,
    patch_size: int,
    n_bins: int,
    band_limit: float = 0.5,
    device: torch.device | None = None,
) -> torch.Tensor:
    """Radial band of every (unshifted) 2-D FFT sample of a ``height x width`` latent grid; -1 outside the band.

    A sample is inside when ``|f_y| <= band_limit`` and ``|f_x| <= band_limit`` (both signs of the Nyquist
    included). Its band is ``min(floor(n_bins * r / r_max), n_bins - 1)`` with ``r = hypot(f_y, f_x)`` and
    ``r_max = band_limit * sqrt(2)`` (the corner), evaluated exactly: with ``f = u / D`` for integers u, v, D the
    band is the largest ``c`` with ``2 a^2 D^2 c^2 <= n^2 b^2 (u^2 + v^2)`` where ``band_limit = a / b``.
    """
    _check(height, patch_size, n_bins)
    _check(width, patch_size, n_bins)
    limit = _limit(band_limit)
    a, b = limit.numerator, limit.denominator
    # f_y = ky * patch / height: reduce the fraction, then put both axes over a common denominator D.
    step_h, step_w = Fraction(patch_size, height), Fraction(patch_size, width)
    common = math.lcm(step_h.denominator, step_w.denominator)
    u = _signed_indices(height, device) * (step_h.numerator * (common // step_h.denominator))
    v = _signed_indices(width, device) * (step_w.numerator * (common // step_w.denominator))
    inside = ((u.abs() * b) <= a * common)[:, None] & ((v.abs() * b) <= a * common)[None, :]
    numerator = (n_bins * n_bins * b * b) * (u.square()[:, None] + v.square()[None, :])
    denominator = 2 * a * a * common * common
    # float estimate of floor(sqrt(num / den)), then one exact integer correction step each way
    guess = torch.floor(torch.sqrt(numerator.to(device=device, dtype=torch.float64) / denominator)).to(torch.int64)
    guess = torch.where((guess + 1).square() * denominator <= numerator, guess + 1, guess)
    guess = torch.where(guess.square() * denominator > numerator, guess - 1, guess)
    return torch.where(inside, guess.clamp(max=n_bins - 1), torch.full_like(guess, -1))


def cached_axis_tables(
    length: int, patch_size: int, n_bins: int, band_limit: float, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(bin index, sample count per band as float, band centres) for one axis, built once per shape and device."""

    def build() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        with torch.inference_mode(False), torch.no_grad():  # plain tensors even when first built in inference mode
            index = axis_bin_index(length, patch_size, n_bins, band_limit, device)
            counts = _band_counts(index, n_bins, device)
            centres = axis_band_centres(length, patch_size, n_bins, band_limit, device)
        return index, counts, centres

    return TABLES.get(("axis", length, patch_size, n_bins, band_limit, device), build)


def cached_radial_tables(
    height: int, width: int, patch_size: int, n_bins: int, band_limit: float, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """(flattened bin index with -1 mapped to the spare band ``n_bins``, sample count per band as float)."""

    def build() -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode(False), torch.no_grad():
            index = radial_bin_index(height, width, patch_size, n_bins, band_limit, device).flatten()
            index = torch.where(index < 0, torch.full_like(index, n_bins), index)
            counts = _band_counts(index, n_bins + 1, device)[:n_bins]
        return index, counts

    return TABLES.get(("radial", height, width, patch_size, n_bins, band_limit, device), build)
