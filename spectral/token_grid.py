"""SEGA's spectrum the way both reference codes compute it: on a (rows x cols) map of token values.

The SEGA authors' code (rajabi2001/sega) and the diffusers port (smellslikeml/diffusers) share their spectral
helpers; only what goes into the map differs (see :mod:`spectral.recipes`). From the map, minus its mean:

* **Axis profiles.** Along the rows: the power of the 1-D FFT along the rows, averaged over the columns, samples
  ``k = 0 .. L // 2`` (``L`` the rows), put in ``n = max(L // 2, 8)`` bins by
  ``floor(float32(linspace(0, 1, L // 2 + 1))[k] * n)`` clamped to ``n - 1``. The float32 ``linspace`` rounds some
  ``k / (L // 2) * n`` just below an integer, so at many lengths some bins get two samples and a neighbour none
  (3840x2160 on Flux: 7 of 67 row bins and 7 of 120 column bins empty; 4096², 2048², 130 tokens: none); an empty
  bin reads 0 and then the energy floor. With exact
  arithmetic the bins would hold one sample each (from 16 tokens on); :func:`reference_axis_bin_index` keeps the quirk
  (tests/sega_references.py's ``exact_axis_bin_index`` shows what it changes). Columns likewise.
* **Radial profile.** ``|fftshift(fft2)|^2`` in ``n = max(rows, cols) // 2`` rings by the radius in index units
  about ``(rows / 2, cols / 2)``, divided by its largest value, ring ``floor(r * n)`` clamped to ``n - 1``, in
  float32 as there. The spread comes from the flatness over every ring, empty ones included.
* **Bin means.** ``sum / (count + 1e-8)``.

Bin tables depend on shapes only: computed once per shape on the CPU in float32 (the reference's arithmetic, bit for
bit) and cached per device (shape_cache.py). Profiles are float32 like the references' (float64 if the map is), on
the map's device; what is returned is float64 on the ``device`` the caller hands down (the pack's rule).
"""

from __future__ import annotations

import torch

from .flatness import spectral_spread
from .profiles import CONSTANT_TOLERANCE, LatentSpectrum, fft_dtype
from .settings import SegaSettings
from .shape_cache import TABLES

COUNT_GUARD = 1e-8  # the references' ``energy_sum / (energy_cnt + 1e-8)``


def axis_bin_count(length: int) -> int:
    """Bins on an axis of ``length`` tokens: ``max(length // 2, 8)``, as both codes set them."""
    return max(length // 2, 8)


def radial_bin_count(rows: int, cols: int) -> int:
    """Rings: ``max(rows, cols) // 2`` (at least 1)."""
    return max(max(rows, cols) // 2, 1)


def reference_axis_bin_index(length: int, n_bins: int | None = None) -> torch.Tensor:
    """Bin of each FFT sample ``k = 0 .. length // 2`` as the references assign it (float32 ``linspace``), int64."""
    n_bins = axis_bin_count(length) if n_bins is None else n_bins
    return _axis_bins(length, n_bins, torch.device("cpu"))


def reference_radial_bin_index(rows: int, cols: int, n_bins: int | None = None) -> torch.Tensor:
    """Ring of each sample of the fftshifted ``rows x cols`` spectrum, flattened, int64 (reference arithmetic)."""
    n_bins = radial_bin_count(rows, cols) if n_bins is None else n_bins
    return _radial_bins(rows, cols, n_bins, torch.device("cpu"))


def _axis_bins(length: int, n_bins: int, device: torch.device) -> torch.Tensor:
    if length < 1 or n_bins < 1:
        raise ValueError(f"Need length and n_bins >= 1, got {length} and {n_bins}.")

    def build() -> torch.Tensor:
        with torch.inference_mode(False), torch.no_grad():
            fraction = torch.linspace(0.0, 1.0, length // 2 + 1, dtype=torch.float32)  # on the CPU: reference bits
            return (fraction * n_bins).to(torch.int64).clamp(0, n_bins - 1).to(device)

    return TABLES.get(("token axis", length, n_bins, device), build)


def _radial_bins(rows: int, cols: int, n_bins: int, device: torch.device) -> torch.Tensor:
    if rows < 1 or cols < 1 or n_bins < 1:
        raise ValueError(f"Need rows, cols and n_bins >= 1, got {rows}, {cols} and {n_bins}.")

    def build() -> torch.Tensor:
        with torch.inference_mode(False), torch.no_grad():
            y = torch.arange(rows, dtype=torch.float32) - rows / 2.0
            x = torch.arange(cols, dtype=torch.float32) - cols / 2.0
            radius = torch.sqrt(y[:, None] ** 2 + x[None, :] ** 2)
            radius = radius / (radius.max() + 1e-8)
            return (radius * n_bins).to(torch.int64).clamp(0, n_bins - 1).flatten().to(device)

    return TABLES.get(("token radial", rows, cols, n_bins, device), build)


def _bin_means(samples: torch.Tensor, index: torch.Tensor, n_bins: int) -> torch.Tensor:
    """(..., S) samples -> (..., n_bins) means per bin, ``sum / (count + 1e-8)`` (an empty bin reads 0)."""
    flat = samples.reshape(-1, samples.shape[-1])
    sums = torch.zeros(flat.shape[0], n_bins, dtype=flat.dtype, device=flat.device).index_add_(1, index, flat)
    counts = torch.zeros(n_bins, dtype=flat.dtype, device=flat.device).index_add_(0, index, torch.ones_like(flat[0]))
    return (sums / (counts + COUNT_GUARD)).reshape(*samples.shape[:-1], n_bins)


def _nominal_centres(length: int, n_bins: int, device: torch.device) -> torch.Tensor:
    """Centre of each axis bin in cycles per token (``k / length`` spans 0 .. (length // 2) / length)."""
    top = (length // 2) / length
    return (torch.arange(n_bins, dtype=torch.float64, device=device) + 0.5) * (top / n_bins)


def token_map_spectrum(token_map: torch.Tensor, settings: SegaSettings, per_sample: bool = True,
                       device: torch.device | None = None) -> LatentSpectrum:
    """Profiles and spread of a ``(B, T, rows, cols)`` map of token values (channel means), as the references do;
    float64 on ``device`` (the pack's rule; None: the map's).

    ``per_sample=False`` averages the map over the batch first (the official code) and returns one row. Frames
    (``T > 1``, video) are averaged in power, one spectrum per sample, as for the latent spectrum. No host sync:
    a constant or non-finite map is reported in ``valid`` (its temperatures fall back to m_ref).
    """
    if token_map.dim() != 4:
        raise ValueError(f"Expected a (B, T, rows, cols) token map, got shape {tuple(token_map.shape)}.")
    device = token_map.device if device is None else device
    raw = token_map.to(fft_dtype(token_map))
    if not per_sample:
        raw = raw.mean(dim=0, keepdim=True)
    finite = torch.isfinite(raw).flatten(1).all(dim=1)
    mean_map = torch.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0)
    centred = mean_map - mean_map.mean(dim=(-2, -1), keepdim=True)
    varies = centred.abs().flatten(1).amax(dim=1) > CONSTANT_TOLERANCE * mean_map.abs().flatten(1).amax(dim=1)

    rows, cols = centred.shape[-2:]
    profiles = []
    for dim, length in ((-2, rows), (-1, cols)):
        spectrum = torch.fft.fft(centred, dim=dim)
        power = spectrum.real.square() + spectrum.imag.square()
        line = power.mean(dim=-1 if dim == -2 else -2).narrow(-1, 0, length // 2 + 1).mean(dim=1)  # (B, half)
        n_bins = axis_bin_count(length)
        profiles.append(_bin_means(line, _axis_bins(length, n_bins, centred.device), n_bins))
    spectrum2d = torch.fft.fftshift(torch.fft.fft2(centred), dim=(-2, -1))
    power2d = (spectrum2d.real.square() + spectrum2d.imag.square()).mean(dim=1).flatten(1)  # (B, rows * cols)
    n_rings = radial_bin_count(rows, cols)
    radial = _bin_means(power2d, _radial_bins(rows, cols, n_rings, centred.device), n_rings)

    axis_h, axis_w = profiles
    valid = finite & varies & torch.cat([axis_h, axis_w, radial], dim=1).isfinite().all(dim=1)
    keep = valid[:, None]
    axis_h = torch.where(keep, axis_h, torch.zeros_like(axis_h)).to(device=device, dtype=torch.float64)
    axis_w = torch.where(keep, axis_w, torch.zeros_like(axis_w)).to(device=device, dtype=torch.float64)
    radial = torch.where(keep, radial, torch.zeros_like(radial))
    spread = spectral_spread(radial, settings).to(device=device, dtype=torch.float64)  # every ring, empty ones too
    valid = valid.to(device)
    spread = torch.where(valid, spread, torch.full_like(spread, settings.spread_min))
    return LatentSpectrum(axis_h=axis_h, axis_w=axis_w,
                          band_h=_nominal_centres(rows, axis_h.shape[-1], device),
                          band_w=_nominal_centres(cols, axis_w.shape[-1], device),
                          radial=radial.to(device=device, dtype=torch.float64), spread=spread, valid=valid)
