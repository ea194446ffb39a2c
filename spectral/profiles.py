"""Per-sample spectral profiles of the current latent x_t: axis energies E_h, E_w, the radial E_iso and the spread.

One 2-D FFT per step, in float32 on the latent's device (float64 if the latent already is). The axis profiles come
from the same 2-D power by Parseval: the power of the 1-D FFT along rows, averaged over the columns, is the 2-D
power summed over the column frequencies divided by width**2. Binning and the rest are float64 on the ``device`` the
caller hands down (the pack's rule: the latent's device, or the CPU where that has no float64), so
every device gets the float64 path's numbers from the same power. No host read: invalid samples are handled with
``torch.where`` and reported in ``valid``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .bands import axis_band_count, cached_axis_tables, cached_radial_tables, radial_band_count
from .flatness import spectral_spread
from .settings import SegaSettings

# A sample whose channel-mean map varies by less than this fraction of its magnitude is "constant": what is left is
# float rounding of the mean, not image content.
CONSTANT_TOLERANCE = 1e-5


@dataclass(frozen=True)
class LatentSpectrum:
    """Per-sample profiles of one latent (float64, every field on the device the caller handed down).

    ``axis_h[b, j]`` is the mean power of band ``j`` along the rows (latent H), whose centre is ``band_h[j]``
    cycles per token; likewise for ``axis_w``/``band_w`` along the columns. ``radial`` is the 2-D power in
    concentric rings of the token band. Video frames (T) are averaged in power. ``valid`` is False where the latent was non-finite or constant; there
    the profiles are 0 and ``spread`` is ``spread_min``, and :func:`spectral.pair_temperatures` returns m_ref (floored).
    """

    axis_h: torch.Tensor
    axis_w: torch.Tensor
    band_h: torch.Tensor
    band_w: torch.Tensor
    radial: torch.Tensor
    spread: torch.Tensor
    valid: torch.Tensor


def _frames(latent: torch.Tensor) -> torch.Tensor:
    """(B, C, H, W) or (B, C, T, H, W) -> (B, C, T, H, W)."""
    if latent.dim() == 4:
        return latent.unsqueeze(2)
    if latent.dim() == 5:
        return latent
    raise ValueError(f"Expected a latent of shape (B, C, H, W) or (B, C, T, H, W), got {tuple(latent.shape)}.")


def fft_dtype(values: torch.Tensor) -> torch.dtype:
    """The FFT's dtype: float32, or float64 for float64 input (whose device has float64 already)."""
    return torch.float64 if values.dtype == torch.float64 else torch.float32


def _raw_mean_map(latent: torch.Tensor) -> torch.Tensor:
    """Channel mean of each sample and frame, (B, T, H, W), accumulated in the FFT dtype without copying the latent.

    Any NaN/inf in the latent reaches the mean at its pixel (NaN propagates, +inf + -inf is NaN), so checking this
    small map is enough to find non-finite samples.
    """
    return _frames(latent).mean(dim=1, dtype=fft_dtype(latent))


def _mean_map(latent: torch.Tensor) -> torch.Tensor:
    """:func:`_raw_mean_map` with non-finite values zeroed so they cannot spread to the rest of the spectrum."""
    return torch.nan_to_num(_raw_mean_map(latent), nan=0.0, posinf=0.0, neginf=0.0)


def channel_map(latent: torch.Tensor) -> torch.Tensor:
    """Channel-mean map of each sample and frame, minus its spatial mean (per frame): (B, T, H, W).

    Channels are averaged before the FFT, as the port and the reference do.
    """
    mean_map = _mean_map(latent)
    return mean_map - mean_map.mean(dim=(-2, -1), keepdim=True)


def power_spectrum(centred_map: torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
    """|fft2|^2 of a (B, T, H, W) map, unshifted and unnormalized, averaged over T: (B, H, W), float64 on
    ``device`` (None: the map's; the FFT runs on the map's device)."""
    spectrum = torch.fft.fft2(centred_map)
    power = spectrum.real.square() + spectrum.imag.square()
    return power.mean(dim=1).to(device=device, dtype=torch.float64)


def _bin_means(samples: torch.Tensor, index: torch.Tensor, counts: torch.Tensor, n_slots: int) -> torch.Tensor:
    """Mean of ``samples[..., i]`` per band ``index[i]`` (bands past ``counts`` are a discard slot)."""
    sums = torch.zeros(samples.shape[0], n_slots, dtype=samples.dtype, device=samples.device)
    sums.index_add_(1, index, samples)
    return sums[:, : counts.numel()] / counts.clamp(min=1.0)


def axis_profile(
    power2d: torch.Tensor, dim: int, patch_size: int, n_bins: int | None = None, band_limit: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """Band energies along latent axis ``dim`` (-2 = rows/H, -1 = columns/W) of a (B, H, W) power: (B, n), centres.

    Power of the 1-D FFT along ``dim``, averaged over the other axis, then averaged over the FFT samples of each
    band (non-negative frequencies up to ``band_limit`` cycles per token).
    """
    if dim not in (-2, -1):
        raise ValueError(f"dim must be -2 (rows) or -1 (columns), got {dim}.")
    length, other = power2d.shape[dim], power2d.shape[-1 if dim == -2 else -2]
    n_bins = axis_band_count(length, patch_size) if n_bins is None else n_bins
    index, counts, centres = cached_axis_tables(length, patch_size, n_bins, float(band_limit), power2d.device)
    line_power = power2d.sum(dim=-1 if dim == -2 else -2) / float(other * other)
    return _bin_means(line_power[:, : index.numel()], index, counts, n_bins), centres


def radial_profile(
    power2d: torch.Tensor, patch_size: int, n_bins: int | None = None, band_limit: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean 2-D power per concentric ring (see :func:`spectral.bands.radial_bin_index`): (B, n), samples per ring."""
    height, width = power2d.shape[-2:]
    n_bins = radial_band_count(height, width, patch_size) if n_bins is None else n_bins
    index, counts = cached_radial_tables(height, width, patch_size, n_bins, float(band_limit), power2d.device)
    return _bin_means(power2d.flatten(1), index, counts, n_bins + 1), counts


def latent_spectrum(latent: torch.Tensor, patch_size: int, settings: SegaSettings,
                    device: torch.device | None = None) -> LatentSpectrum:
    """Spectral profiles and spread of every sample of ``latent`` (B, C, H, W) or (B, C, T, H, W), float64 on
    ``device`` (the pack's rule; None: the latent's); no host read.

    ``patch_size`` is the latent pixels per token along each spatial axis (Flux, Qwen-Image: 2).
    """
    if isinstance(patch_size, bool) or not isinstance(patch_size, int) or patch_size < 1:
        raise ValueError(f"patch_size must be an integer >= 1, got {patch_size!r}.")
    device = latent.device if device is None else device
    raw_map = _raw_mean_map(latent)
    finite = torch.isfinite(raw_map).flatten(1).all(dim=1)  # also False where the channel sum overflows
    mean_map = torch.nan_to_num(raw_map, nan=0.0, posinf=0.0, neginf=0.0)
    centred = mean_map - mean_map.mean(dim=(-2, -1), keepdim=True)
    spread_of_map = centred.abs().flatten(1).amax(dim=1)
    varies = spread_of_map > CONSTANT_TOLERANCE * mean_map.abs().flatten(1).amax(dim=1)

    power = power_spectrum(centred, device)
    axis_h, band_h = axis_profile(power, -2, patch_size)
    axis_w, band_w = axis_profile(power, -1, patch_size)
    radial, counts = radial_profile(power, patch_size)
    profiles_finite = torch.cat([axis_h, axis_w, radial], dim=1).isfinite().all(dim=1)
    valid = (finite & varies).to(power.device) & profiles_finite

    keep = valid[:, None]
    axis_h = torch.where(keep, axis_h, torch.zeros_like(axis_h))
    axis_w = torch.where(keep, axis_w, torch.zeros_like(axis_w))
    radial = torch.where(keep, radial, torch.zeros_like(radial))
    spread = spectral_spread(radial, settings, mask=counts > 0)
    spread = torch.where(valid, spread, torch.full_like(spread, settings.spread_min))
    return LatentSpectrum(axis_h, axis_w, band_h, band_w, radial, spread, valid)
