"""SEGA building blocks against the function-level reference values.

Data: tests/data/sega_reference.safetensors + .json, copied from the project's shared reference set
(shared/reference/sega_reference.*; provenance in its README: an independent float64 implementation of the
formulas of ComfyUI-DyPE src/sega.py and the smellslikeml/diffusers port, arXiv 2605.22668).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from spectral import SegaSettings, axis_temperatures, latent_spectrum, reference_temperature
from spectral.allocation import centred_tanh, log_energy_at, port_bin_positions, port_pair_temperatures, standardize
from spectral.bands import axis_bin_index, radial_bin_index
from spectral.flatness import spectral_flatness, spectral_spread, spread_from_flatness
from spectral.profiles import axis_profile, channel_map, power_spectrum, radial_profile

DATA = Path(__file__).resolve().parent / "data"
REF = load_file(str(DATA / "sega_reference.safetensors"))
MANIFEST = json.loads((DATA / "sega_reference.json").read_text())
EPS = MANIFEST["eps"]
EXACT = dict(rtol=0.0, atol=1e-12)
ALLOC_PROFILES = ("power_law_128", "mid_peak_64", "random_16")


def close(actual: torch.Tensor, expected: torch.Tensor, **tol: float) -> None:
    torch.testing.assert_close(actual.to(torch.float64), expected.to(torch.float64), **(tol or EXACT))


def test_manifest_lists_every_tensor() -> None:
    assert sorted(REF) == sorted(MANIFEST["tensor_list"])


def test_m_ref() -> None:
    got = torch.tensor([reference_temperature(r, 0.08) for r in REF["m_ref/ratio"].tolist()], dtype=torch.float64)
    close(got, REF["m_ref/m_ref"])
    close(REF["m_ref/target_res_px"] / 1024, REF["m_ref/ratio"])


@pytest.mark.parametrize("name", ["flat", "power_law", "single_peak", "random"])
def test_flatness_and_spread(name: str) -> None:
    energy = REF[f"flatness/{name}/energy"]
    settings = SegaSettings()
    flatness = spectral_flatness(energy, EPS)
    close(flatness, REF[f"flatness/{name}/flatness"])
    close(1 - flatness, REF[f"flatness/{name}/concentration"])
    close(spread_from_flatness(flatness, settings), REF[f"flatness/{name}/spread"])
    close(spectral_spread(energy, settings), REF[f"flatness/{name}/spread"])
    close(spectral_spread(energy[None], settings)[0], REF[f"flatness/{name}/spread"])  # batched


def test_alloc_frequencies_are_the_ntk_ones() -> None:
    theta_ntk = 10000 * 4 ** (56 / 54)
    freqs = 1.0 / theta_ntk ** (torch.arange(0, 56, 2, dtype=torch.float64) / 56)
    close(freqs, REF["alloc/freqs"])
    assert REF["alloc/m_ref"].item() == pytest.approx(reference_temperature(4.0, 0.08), abs=1e-15)


@pytest.mark.parametrize("profile", ALLOC_PROFILES)
def test_port_allocation_intermediates(profile: str) -> None:
    freqs, energy = REF["alloc/freqs"], REF[f"alloc/{profile}/energy"]
    n_bins = int(REF[f"alloc/{profile}/n_bins"])
    assert energy.numel() == n_bins
    bin_pos = port_bin_positions(freqs, n_bins)
    close(bin_pos, REF[f"alloc/{profile}/bin_pos"])
    raw = log_energy_at(bin_pos, energy, EPS)
    close(raw, REF[f"alloc/{profile}/raw_logE"])
    z = standardize(raw, EPS)
    close(z, REF[f"alloc/{profile}/z"])
    close(centred_tanh(z, 1.5), REF[f"alloc/{profile}/s_centred"])


@pytest.mark.parametrize("profile", ALLOC_PROFILES)
@pytest.mark.parametrize("spread", [1.0, 0.5, 0.0])
@pytest.mark.parametrize("min_mscale", [1.0, 0.0])
def test_port_allocation_scales(profile: str, spread: float, min_mscale: float) -> None:
    settings = SegaSettings(alpha=0.15, beta=1.5, floor=min_mscale)
    m_ref = REF["alloc/m_ref"].item()
    expected = REF[f"alloc/{profile}/spread{spread}/min_mscale{min_mscale}/m"]
    energy = REF[f"alloc/{profile}/energy"]
    got = port_pair_temperatures(
        REF["alloc/freqs"], energy[None], torch.tensor([spread], dtype=torch.float64), m_ref, settings
    )
    assert got.shape == (1, 28) and got.dtype == torch.float64
    close(got[0], expected)
    if min_mscale == 0.0:
        assert got.mean().item() == pytest.approx(m_ref, abs=1e-12)  # zero-sum s


@pytest.mark.parametrize("profile", ALLOC_PROFILES)
@pytest.mark.parametrize("spread", [1.0, 0.5, 0.0])
def test_node_defaults_reproduce_the_port(profile: str, spread: float) -> None:
    """SEGA Attention's defaults (allocation rank, floor 1.0, m_ref power) are the port's min_mscale 1.0 values."""
    energy = REF[f"alloc/{profile}/energy"]
    got = axis_temperatures(REF["alloc/freqs"], None, energy[None], torch.tensor([spread], dtype=torch.float64),
                            4.0, SegaSettings())
    close(got[0], REF[f"alloc/{profile}/spread{spread}/min_mscale1.0/m"])
    exact = axis_temperatures(REF["alloc/freqs"], None, energy[None], torch.tensor([spread], dtype=torch.float64),
                              4.0, SegaSettings(floor=0.0))
    close(exact[0], REF[f"alloc/{profile}/spread{spread}/min_mscale0.0/m"])


# --- latent profiles -------------------------------------------------------------------------------------------


def test_latent_map_and_power() -> None:
    latent = REF["latent/latent"].double()
    centred = channel_map(latent)
    assert centred.shape == (1, 1, 64, 64)
    close(centred[0, 0], REF["latent/map"])
    close(power_spectrum(centred)[0], REF["latent/power2d"], rtol=1e-10, atol=1e-9)


def test_axis_profiles_by_parseval_equal_the_1d_fft_definition() -> None:
    # reference definition: 1-D FFT along one axis, |.|^2, mean over the other axis (k = 0..32)
    ref_map = REF["latent/map"]
    close(torch.fft.fft(ref_map, dim=0).abs().square().mean(dim=1)[:33], REF["latent/axis_h_raw"], rtol=1e-10, atol=0)
    close(torch.fft.fft(ref_map, dim=1).abs().square().mean(dim=0)[:33], REF["latent/axis_w_raw"], rtol=1e-10, atol=0)
    close(REF["latent/axis_raw_freq_cycles_per_token"], torch.arange(33, dtype=torch.float64) / 32)
    close(REF["latent/freq_cycles_per_token"], torch.fft.fftfreq(64, d=0.5, dtype=torch.float64))
    power = REF["latent/power2d"][None]
    axis_h, centres = axis_profile(power, -2, patch_size=2)
    close(axis_h[0], REF["latent/axis_h"], rtol=1e-12, atol=0)
    close(axis_profile(power, -1, patch_size=2)[0][0], REF["latent/axis_w"], rtol=1e-12, atol=0)
    # each primary band holds k = j (cycles/token j/32); the last band also holds the Nyquist k = 16
    expected_centres = torch.arange(16, dtype=torch.float64) / 32
    expected_centres[15] = (15 + 16) / 2 / 32
    close(centres, expected_centres)


def test_bin_indices_exact() -> None:
    assert axis_bin_index(64, 2, 16).tolist() == REF["latent/axis_bin_index"].tolist()
    assert axis_bin_index(64, 2, 16, band_limit=1.0).tolist() == REF["latent/fullband/axis_bin_index"].tolist()
    assert torch.equal(radial_bin_index(64, 64, 2, 16), REF["latent/radial_bin_index"])
    assert torch.equal(radial_bin_index(64, 64, 2, 16, band_limit=1.0), REF["latent/fullband/radial_bin_index"])
    assert torch.equal(radial_bin_index(32, 32, 1, 16), REF["latent/tokengrid/radial_bin_index"])


def test_naive_float_radial_binning_would_be_wrong() -> None:
    """Why the bins are exact: a float64 floor moves edge samples one ring down (README: 28 of them)."""
    # Plain Python floats (correctly rounded sqrt): torch's vectorized sqrt rounds differently on different CPUs
    # (44 misplaced samples on an AVX-512 machine), which would make the count machine-dependent.
    f = [(k if k < 32 else k - 64) / 32 for k in range(64)]  # fftfreq(64, d=0.5)
    exact = REF["latent/radial_bin_index"].tolist()
    misplaced = [
        (i, j) for i in range(64) for j in range(64)
        if exact[i][j] >= 0 and min(math.floor(16 * math.sqrt(f[i] ** 2 + f[j] ** 2) / math.sqrt(0.5)), 15) != exact[i][j]
    ]
    assert len(misplaced) == 28


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_primary_latent_spectrum(dtype: torch.dtype, rtol: float) -> None:
    """The production path (float32 FFT) and the float64 path both give the primary ('correct') profiles."""
    spectrum = latent_spectrum(REF["latent/latent"].to(dtype), 2, SegaSettings())
    close(spectrum.axis_h[0], REF["latent/axis_h"], rtol=rtol, atol=0)
    close(spectrum.axis_w[0], REF["latent/axis_w"], rtol=rtol, atol=0)
    close(spectrum.radial[0], REF["latent/radial"], rtol=rtol, atol=0)
    close(spectrum.spread[0], REF["latent/spread"], rtol=rtol, atol=0)
    assert spectrum.valid.tolist() == [True]
    assert spectrum.spread.item() == pytest.approx(MANIFEST["values_summary"]["latent_spread_primary"], rel=rtol)
    # not the ComfyUI-DyPE wrapper's buggy value (latent grid binned as a token grid)
    assert abs(spectrum.spread.item() - 0.011593) > 0.1


def test_primary_radial_counts_and_flatness() -> None:
    radial, counts = radial_profile(REF["latent/power2d"][None], patch_size=2)
    close(radial[0], REF["latent/radial"], rtol=1e-12, atol=0)
    assert counts.long().tolist() == REF["latent/radial_count"].tolist()
    assert int(counts.sum()) == 33 * 33
    close(spectral_flatness(radial[0], EPS), REF["latent/flatness"], rtol=1e-12, atol=0)


def test_fullband_profiles() -> None:
    power = REF["latent/power2d"][None]
    close(
        axis_profile(power, -2, 2, n_bins=16, band_limit=1.0)[0][0], REF["latent/fullband/axis_h"], rtol=1e-12, atol=0
    )
    close(
        axis_profile(power, -1, 2, n_bins=16, band_limit=1.0)[0][0], REF["latent/fullband/axis_w"], rtol=1e-12, atol=0
    )
    radial, counts = radial_profile(power, 2, n_bins=16, band_limit=1.0)
    close(radial[0], REF["latent/fullband/radial"], rtol=1e-12, atol=0)
    assert counts.long().tolist() == REF["latent/fullband/radial_count"].tolist()
    close(spectral_flatness(radial[0], EPS), REF["latent/fullband/flatness"], rtol=1e-12, atol=0)
    close(spectral_spread(radial[0], SegaSettings()), REF["latent/fullband/spread"], rtol=1e-12, atol=0)


def test_tokengrid_profiles_are_the_pooled_latent_at_patch_1() -> None:
    """The smellslikeml port's token-grid FFT == our spectrum of the 2x2-pooled latent with patch size 1."""
    pooled = F.avg_pool2d(REF["latent/latent"].double(), 2)
    close(channel_map(pooled)[0, 0], REF["latent/tokengrid/map"])
    spectrum = latent_spectrum(pooled, 1, SegaSettings())
    close(spectrum.axis_h[0], REF["latent/tokengrid/axis_h"], rtol=1e-12, atol=0)
    close(spectrum.axis_w[0], REF["latent/tokengrid/axis_w"], rtol=1e-12, atol=0)
    close(spectrum.radial[0], REF["latent/tokengrid/radial"], rtol=1e-12, atol=0)
    close(spectral_flatness(spectrum.radial[0], EPS), REF["latent/tokengrid/flatness"], rtol=1e-12, atol=0)
    close(spectrum.spread[0], REF["latent/tokengrid/spread"], rtol=1e-12, atol=0)
