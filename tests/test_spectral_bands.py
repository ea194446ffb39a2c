"""SEGA behaviour beyond the reference values, the spectrum's side: settings validation, physical cycles-per-token
binning and per-sample independence. (The temperatures' side: test_spectral_temperatures.py.)"""

from __future__ import annotations

import math

import pytest
import torch
from spectral_cases import M_REF, SETTINGS, axis_scales, ntk_freqs, random_latent

from spectral import MAX_ALPHA, SegaSettings, latent_spectrum, reference_temperature
from spectral.allocation import band_positions, pair_temperatures
from spectral.bands import axis_band_count, axis_bin_index

# --- settings ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("kappa", -0.1),
        ("alpha", float("nan")),
        ("beta", -1.0),
        ("spread_min", -0.1),
        ("spread_max", 1.5),
        ("spread_alpha", 0.0),
        ("floor", -1.0),
        ("alpha", MAX_ALPHA + 0.01),
        ("allocation", "physical"),
        ("m_ref", "ntk"),
        ("eps", 0.0),
        ("kappa", float("inf")),
    ],
)
def test_settings_validation_names_field_and_value(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        SegaSettings(**{field: value})


def test_settings_spread_order() -> None:
    with pytest.raises(ValueError, match="spread_min"):
        SegaSettings(spread_min=0.8, spread_max=0.2)


def test_reference_temperature() -> None:
    assert reference_temperature(0.5, 0.08) == 1.0  # never below 1
    assert reference_temperature(4.0, 0.08) == pytest.approx(4**0.08)
    with pytest.raises(ValueError):
        reference_temperature(float("nan"), 0.08)


# --- cycles-per-token binning -----------------------------------------------------------------------------------


def sinusoid_latent(batch: int, height: int, width: int, axis: str, k: int, frames: int | None = None) -> torch.Tensor:
    """Latent whose channels all hold cos(2 pi k y / L) along ``axis`` (FFT index k on the latent grid)."""
    length = height if axis == "h" else width
    coord = torch.arange(length, dtype=torch.float64)
    wave = torch.cos(2 * math.pi * k * coord / length + 0.3)
    grid = wave[:, None].expand(height, width) if axis == "h" else wave[None, :].expand(height, width)
    shape = (batch, 4, height, width) if frames is None else (batch, 4, frames, height, width)
    return grid.to(torch.float32).expand(shape).clone()


CASES = [  # (patch, height, width, axis, k): the wave is k * patch / L cycles per token
    (2, 64, 48, "h", 5),
    (2, 64, 48, "w", 7),
    (1, 48, 40, "h", 7),
    (1, 48, 40, "w", 13),
    (2, 50, 34, "w", 3),  # odd token counts
]


@pytest.mark.parametrize("frames", [None, 3])
@pytest.mark.parametrize("patch, height, width, axis, k", CASES)
def test_sinusoid_lands_in_the_band_of_its_cycles_per_token(patch, height, width, axis, k, frames) -> None:
    length = height if axis == "h" else width
    cycles = k * patch / length
    assert cycles <= 0.5
    latent = sinusoid_latent(2, height, width, axis, k, frames)
    spectrum = latent_spectrum(latent, patch, SETTINGS)
    energy, bands = (spectrum.axis_h, spectrum.band_h) if axis == "h" else (spectrum.axis_w, spectrum.band_w)
    other = spectrum.axis_w if axis == "h" else spectrum.axis_h
    peak = int(energy[0].argmax())
    assert bands[peak].item() == pytest.approx(cycles, abs=1e-12)
    assert energy[0, peak] > 1e6 * energy[0].clone().index_fill_(0, torch.tensor([peak]), 0).max()
    assert int(other[0].argmax()) == 0  # constant along the other axis: all its power is at f = 0
    assert spectrum.valid.all()

    # A pair rotating at exactly that many cycles per token reads the peak band -> the lowest temperature.
    omega = 2 * math.pi * cycles
    freqs = torch.tensor([omega / 2, omega, min(2 * omega, math.pi), 0.02, 0.35 * 2 * math.pi], dtype=torch.float64)
    assert band_positions(freqs[1:2], bands).item() == pytest.approx(peak, abs=1e-9)
    m = pair_temperatures(freqs[None], bands, energy, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
    assert int(m[0].argmin()) == 1
    assert m[0, 1] < M_REF


@pytest.mark.parametrize("patch, height, width, axis, k", CASES[:4])
def test_wrong_patch_factor_misplaces_the_energy(patch, height, width, axis, k) -> None:
    """Guard for the test above: binning with the wrong patch size moves the peak off the pair's frequency."""
    length = height if axis == "h" else width
    cycles = k * patch / length
    latent = sinusoid_latent(1, height, width, axis, k)
    wrong = 1 if patch == 2 else 2
    spectrum = latent_spectrum(latent, wrong, SETTINGS)
    energy, bands = (spectrum.axis_h, spectrum.band_h) if axis == "h" else (spectrum.axis_w, spectrum.band_w)
    if cycles * wrong / patch <= 0.5:  # still representable: found at the wrong frequency
        assert bands[int(energy[0].argmax())].item() == pytest.approx(cycles * wrong / patch, abs=1e-12)
    omega = 2 * math.pi * cycles
    freqs = torch.tensor([omega / 2, omega, 0.02], dtype=torch.float64)
    m = pair_temperatures(freqs[None], bands, energy, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
    assert int(m[0].argmin()) != 1


def test_axis_bands_cover_token_band_without_gaps() -> None:
    for length in range(1, 130):
        for patch in (1, 2, 4):
            n = axis_band_count(length, patch)
            index = axis_bin_index(length, patch, n)
            assert index[-1].item() == n - 1 and set(index.tolist()) == set(range(n)), (length, patch)
            assert (index.numel() - 1) * patch / length <= 0.5


def test_4d_equals_5d_with_one_frame() -> None:
    latent = random_latent(2, 16, 40, 56, seed=3)
    a, b = latent_spectrum(latent, 2, SETTINGS), latent_spectrum(latent[:, :, None], 2, SETTINGS)
    for name in ("axis_h", "axis_w", "band_h", "band_w", "radial", "spread", "valid"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def test_output_shapes_and_dtypes() -> None:
    spectrum, m_h, m_w = axis_scales(random_latent(3, 16, 64, 96, seed=0), 2, ntk_freqs()[None])
    assert spectrum.axis_h.shape == (3, 16) and spectrum.axis_w.shape == (3, 24)
    assert spectrum.band_h.shape == (16,) and spectrum.band_w.shape == (24,)
    assert spectrum.radial.shape == (3, 24) and spectrum.spread.shape == (3,) and spectrum.valid.dtype == torch.bool
    assert spectrum.axis_h.dtype == torch.float64 and spectrum.spread.dtype == torch.float64
    assert m_h.shape == (3, 28) and m_h.dtype == torch.float64
    assert torch.equal(
        pair_temperatures(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, SETTINGS), m_h
    )
    assert ((spectrum.spread >= 0) & (spectrum.spread <= 1)).all()


# --- per sample -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("frames", [None, 2])
def test_batch_elements_are_independent(frames: int | None) -> None:
    shape = (1, 16, 48, 64) if frames is None else (1, 16, frames, 48, 64)
    a = random_latent(*shape, seed=1)
    b = sinusoid_latent(1, 48, 64, "w", 9, frames).repeat_interleave(4, dim=1) + 0.1 * random_latent(*shape, seed=2)
    freqs = ntk_freqs()
    batch = axis_scales(torch.cat([a, b]), 2, freqs[None])
    alone = [axis_scales(x, 2, freqs[None]) for x in (a, b)]
    for i in range(2):
        for name in ("axis_h", "axis_w", "radial", "spread"):
            torch.testing.assert_close(getattr(batch[0], name)[i], getattr(alone[i][0], name)[0], rtol=1e-5, atol=0)
        torch.testing.assert_close(batch[1][i], alone[i][1][0], rtol=1e-6, atol=0)
        torch.testing.assert_close(batch[2][i], alone[i][2][0], rtol=1e-6, atol=0)
    assert not torch.allclose(batch[2][0], batch[2][1])  # no batch averaging


def test_per_sample_frequencies() -> None:
    spectrum = latent_spectrum(random_latent(2, 16, 64, 64, seed=4), 2, SETTINGS)
    freqs = torch.stack([ntk_freqs(4.0), ntk_freqs(2.0)])
    m = pair_temperatures(freqs, spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
    for i in range(2):
        alone = pair_temperatures(
            freqs[i],
            spectrum.band_h,
            spectrum.axis_h[i : i + 1],
            spectrum.spread[i : i + 1],
            M_REF,
            SETTINGS,
            spectrum.valid[i : i + 1],
        )
        torch.testing.assert_close(m[i], alone[0], rtol=0, atol=1e-15)
