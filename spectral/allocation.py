"""Per-RoPE-pair attention temperatures m_d = m_ref * (1 - alpha * spread * s_d) from band energies.

Two ways to place a pair on the band axis, both giving a fractional band position ``j + frac``:

* ``allocation="rank"`` — :func:`port_bin_positions` (both reference codes, the official SEGA code and the diffusers port; the default): log period min-max
  normalized over the pairs, highest frequency on the last band and lowest on band 0, whatever the bands' real
  frequencies are. This is the allocation behind both codes' measured results.
* ``allocation="frequency"`` — :func:`band_positions` (ours, physical): the pair encodes ``omega / (2 pi)`` cycles
  per token; it is placed between the two band centres around that frequency (linear in frequency, clamped to the
  first/last band).

The rest is shared: log energy interpolated at the position, standardized to z, ``s = tanh(beta z)`` made zero-sum,
then the temperature. :func:`axis_temperatures` picks the allocation and m_ref from the settings. Every function is
batched over leading dims, torch-only and free of host syncs, and runs in float64 where ``freqs`` are (the caller
made them on the pack's float64 device, nodes/rope_patch/devices.py).
"""

from __future__ import annotations

import math

import torch

from .settings import SegaSettings, reference_temperature


def band_positions(freqs: torch.Tensor, band_freqs: torch.Tensor) -> torch.Tensor:
    """Fractional band index of each pair: ``freqs`` in rad/token (any shape), ``band_freqs`` (n,) cycles/token.

    A pair whose frequency equals ``band_freqs[j]`` gets exactly ``j``; between two centres it is interpolated
    linearly; below the first or above the last centre it is clamped to that band.
    """
    bands = band_freqs.to(device=freqs.device, dtype=torch.float64).contiguous()
    cycles = freqs.to(bands.dtype) / (2.0 * math.pi)
    n = bands.shape[-1]
    if n == 1:
        return torch.zeros_like(cycles)
    lower = (torch.searchsorted(bands, cycles.contiguous(), right=True) - 1).clamp(0, n - 2)
    low, high = bands[lower], bands[lower + 1]
    frac = ((cycles - low) / (high - low)).clamp(0.0, 1.0)
    return lower.to(cycles.dtype) + frac


def port_bin_positions(freqs: torch.Tensor, n_bins: int) -> torch.Tensor:
    """The port's band position: ``(1 - lpn) * (n_bins - 1)``, lpn the min-max normalized log period over the pairs."""
    log_period = torch.log((2.0 * math.pi) / freqs.to(device=freqs.device, dtype=torch.float64))
    low = log_period.amin(dim=-1, keepdim=True)
    span = (log_period.amax(dim=-1, keepdim=True) - low).clamp(min=torch.finfo(log_period.dtype).tiny)
    return (1.0 - (log_period - low) / span) * (n_bins - 1)


def log_energy_at(positions: torch.Tensor, band_energy: torch.Tensor, eps: float) -> torch.Tensor:
    """log(max(E, eps)) interpolated linearly at fractional band ``positions``: shape batch x pairs.

    ``positions`` (..., pairs) and ``band_energy`` (..., n) broadcast over their leading dims.
    """
    energy = band_energy.to(device=positions.device, dtype=positions.dtype)
    n = energy.shape[-1]
    lower = positions.floor().clamp(0, n - 1)
    frac = (positions - lower).clamp(0.0, 1.0)
    lower = lower.to(torch.int64)
    upper = (lower + 1).clamp(max=n - 1)
    batch = torch.broadcast_shapes(positions.shape[:-1], energy.shape[:-1])
    log_energy = energy.clamp(min=eps).log().expand(*batch, n)
    lower, upper = lower.expand(*batch, -1), upper.expand(*batch, -1)
    low, high = log_energy.gather(-1, lower), log_energy.gather(-1, upper)
    return low + frac * (high - low)  # exact where the two bands are equal (no spurious z from rounding)


def standardize(raw: torch.Tensor, eps: float) -> torch.Tensor:
    """z = (raw - mean) / max(unbiased std, eps) over the pairs (a single pair gives z = 0)."""
    if raw.shape[-1] < 2:
        return torch.zeros_like(raw)
    centred = raw - raw.mean(dim=-1, keepdim=True)
    return centred / raw.std(dim=-1, keepdim=True, correction=1).clamp(min=eps)


def centred_tanh(z: torch.Tensor, beta: float) -> torch.Tensor:
    """s = tanh(beta z) minus its mean over the pairs, so the temperatures average to m_ref."""
    s = torch.tanh(beta * z)
    return s - s.mean(dim=-1, keepdim=True)


def temperatures(
    s: torch.Tensor,
    spread: torch.Tensor | float,
    m_ref: float,
    settings: SegaSettings,
    valid: torch.Tensor | None = None,
) -> torch.Tensor:
    """m = max(m_ref (1 - alpha spread s), floor); m_ref instead of the steered value where spread <= 0, alpha <= 0 or
    ``valid`` is False. The floor bounds every pair in every case (0: no bound). ``spread``/``valid`` are per sample
    (batch dims of s).

    The port returns m_ref unclamped in the unsteered cases; that equals ``max(m_ref, floor)`` whenever
    ``floor <= m_ref``, which holds for its ``min_mscale`` 1.0 (m_ref >= 1).
    """
    amplitude = torch.as_tensor(spread, dtype=s.dtype, device=s.device)[..., None]
    m = m_ref * (1.0 - settings.alpha * amplitude * s)
    steer = amplitude > 0
    if valid is not None:
        steer = steer & valid.to(device=s.device, dtype=torch.bool)[..., None]
    if settings.alpha <= 0:
        steer = torch.zeros_like(steer)
    m = torch.where(steer, m, torch.full_like(m, m_ref))
    return m.clamp(min=settings.floor) if settings.floor > 0 else m


def _temperatures(
    positions: torch.Tensor,
    band_energy: torch.Tensor,
    spread: torch.Tensor | float,
    m_ref: float,
    settings: SegaSettings,
    valid: torch.Tensor | None,
) -> torch.Tensor:
    raw = log_energy_at(positions, band_energy, settings.eps)
    s = centred_tanh(standardize(raw, settings.eps), settings.beta)
    return temperatures(s, spread, m_ref, settings, valid)


def pair_temperatures(
    freqs: torch.Tensor,
    band_freqs: torch.Tensor,
    band_energy: torch.Tensor,
    spread: torch.Tensor,
    m_ref: float,
    settings: SegaSettings,
    valid: torch.Tensor | None = None,
) -> torch.Tensor:
    """SEGA temperature of every RoPE pair of one spatial axis, per sample: (B, pairs) float64.

    ``freqs``: (B or 1, pairs) or (pairs,) angular frequencies in rad/token (e.g. the DyPE schedule at this step);
    ``band_freqs``/``band_energy``/``spread``/``valid``: the axis's ``band_*``/``axis_*`` and ``spread``/``valid``
    of a :class:`LatentSpectrum`. Each pair reads the energy of the band holding its own frequency in cycles per
    token (:func:`band_positions`). Where ``valid`` is False, spread <= 0 or alpha <= 0: ``max(m_ref, floor)``.
    """
    return _temperatures(band_positions(freqs, band_freqs), band_energy, spread, m_ref, settings, valid)


def port_pair_temperatures(
    freqs: torch.Tensor,
    band_energy: torch.Tensor,
    spread: torch.Tensor | float,
    m_ref: float,
    settings: SegaSettings,
    valid: torch.Tensor | None = None,
) -> torch.Tensor:
    """The published port's allocation (``allocation="rank"``): pairs at log-period band positions
    (:func:`port_bin_positions`), whatever the bands' frequencies. Arguments as in :func:`pair_temperatures`."""
    positions = port_bin_positions(freqs, band_energy.shape[-1])
    return _temperatures(positions, band_energy, spread, m_ref, settings, valid)


def axis_temperatures(
    freqs: torch.Tensor,
    band_freqs: torch.Tensor | None,
    band_energy: torch.Tensor,
    spread: torch.Tensor | float,
    scale: float,
    settings: SegaSettings,
    valid: torch.Tensor | None = None,
) -> torch.Tensor:
    """SEGA temperatures of one spatial axis with resolution ratio ``scale``, as ``settings`` asks: m_ref by
    ``settings.m_ref``, allocation by ``settings.allocation``. Arguments as in :func:`pair_temperatures` (``band_freqs``
    is only read by ``"frequency"``); (B, pairs)."""
    m_ref = reference_temperature(scale, settings.kappa, settings.m_ref)
    if settings.allocation == "rank":
        return port_pair_temperatures(freqs, band_energy, spread, m_ref, settings, valid)
    if band_freqs is None:
        raise ValueError("allocation='frequency' needs the band centres (band_freqs) of the spectrum.")
    return pair_temperatures(freqs, band_freqs, band_energy, spread, m_ref, settings, valid)
