"""SEGA recipes in pure math (no ComfyUI): the reference codes' bins and their float32 quirk, the token-map
spectrum, the refined bands at odd lengths, and the SEGA-alone NTK factors of each code."""

from __future__ import annotations

import math

import pytest
import torch
from sega_references import exact_axis_bin_index, port_ntk_factor

from rope import ntk_frequencies, official_ntk_factor, official_qwen_ntk_factors
from spectral import SegaSettings, axis_temperatures, recipe_from_label, recipe_rules, token_grid
from spectral.bands import axis_bin_index
from spectral.token_grid import token_map_spectrum


def empty_bins(length: int) -> int:
    n = token_grid.axis_bin_count(length)
    return int((token_grid.reference_axis_bin_index(length).bincount(minlength=n) == 0).sum())


@pytest.mark.parametrize(("length", "empty"), [(64, 0), (128, 0), (130, 0), (256, 0), (135, 7), (240, 7),
                                               (320, 3), (384, 11)])
def test_reference_axis_bins_keep_the_float32_linspace_quirk(length, empty):
    """float32 linspace(0, 1, L//2 + 1) * n, truncated: empty bins at many lengths (3840x2160: 135 and 240)."""
    assert empty_bins(length) == empty
    exact = exact_axis_bin_index(length, token_grid.axis_bin_count(length))
    assert int((exact.bincount(minlength=token_grid.axis_bin_count(length)) == 0).sum()) == 0
    assert torch.equal(token_grid.reference_axis_bin_index(length), exact) == (empty == 0)


def test_small_axes_get_eight_bins_and_rings_span_the_grid():
    assert token_grid.axis_bin_count(9) == 8 and token_grid.reference_axis_bin_index(9).tolist() == [0, 2, 4, 6, 7]
    rings = token_grid.reference_radial_bin_index(4, 6)
    assert rings.shape == (24,) and rings.max() == 2 and token_grid.radial_bin_count(4, 6) == 3
    assert rings.reshape(4, 6)[2, 3] == 0  # the zero frequency sits at (rows/2, cols/2) after fftshift


def _one_over_f_map(rows: int, cols: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    spectrum = torch.fft.fft2(torch.randn(rows, cols, generator=gen, dtype=torch.float64))
    fy, fx = torch.fft.fftfreq(rows, dtype=torch.float64), torch.fft.fftfreq(cols, dtype=torch.float64)
    radius = torch.sqrt(fy[:, None] ** 2 + fx[None, :] ** 2).clamp(min=1.0 / max(rows, cols))
    return torch.fft.ifft2(spectrum / radius).real


def test_the_linspace_quirk_changes_the_temperatures_at_3840x2160():
    """What exact bins would change (docs/differences.md): at 3840x2160 on Flux (135 x 240 tokens, s = 3.75
    and 2.11) on a 1/f map, the per-pair temperatures move by more than 1e-3 in some pair."""
    rows, cols = 135, 240
    settings = SegaSettings()
    token_map = _one_over_f_map(rows, cols, seed=0)[None, None].float()
    quirk = token_map_spectrum(token_map, settings)
    worst = 0.0
    for length, energy, scale in ((rows, quirk.axis_h, rows / 64), (cols, quirk.axis_w, cols / 64)):
        original = token_grid._axis_bins
        try:  # the same profile with every sample in its exact bin
            token_grid._axis_bins = lambda n, bins, device: exact_axis_bin_index(n, bins).to(device)
            exact = token_map_spectrum(token_map, settings)
        finally:
            token_grid._axis_bins = original
        exact_energy = exact.axis_h if length == rows else exact.axis_w
        freqs = ntk_frequencies(56, 10000.0, port_ntk_factor(scale, 56))[None]
        m_quirk = axis_temperatures(freqs, None, energy, quirk.spread, scale, settings)
        m_exact = axis_temperatures(freqs, None, exact_energy, exact.spread, scale, settings)
        worst = max(worst, float((m_quirk - m_exact).abs().max()))
    print(f"3840x2160, 1/f map: the float32 linspace bins move a temperature by up to {worst:.4f}")
    assert worst > 1e-3


def test_token_map_spectrum_batch_rule_and_fallbacks():
    gen = torch.Generator().manual_seed(1)
    maps = torch.randn(2, 1, 12, 20, generator=gen)
    maps[1] = maps[1] * torch.linspace(0.2, 3.0, 20)
    per_sample = token_map_spectrum(maps, SegaSettings())
    batch = token_map_spectrum(maps, SegaSettings(), per_sample=False)
    assert per_sample.axis_w.shape == (2, 10) and batch.axis_w.shape == (1, 10)
    alone = token_map_spectrum(maps.mean(dim=0, keepdim=True), SegaSettings())
    assert torch.equal(batch.axis_w, alone.axis_w)  # the official code's batch rule: the map averaged first
    assert not torch.allclose(per_sample.axis_w[0], per_sample.axis_w[1])
    bad = maps.clone()
    bad[0, 0, 3, 3] = float("nan")
    bad[1] = 5.0  # constant
    spectrum = token_map_spectrum(bad, SegaSettings())
    assert spectrum.valid.tolist() == [False, False] and torch.isfinite(spectrum.axis_h).all()
    with pytest.raises(ValueError, match="token map"):
        token_map_spectrum(torch.zeros(12, 20), SegaSettings())


def test_refined_bands_hold_one_harmonic_each_at_odd_lengths():
    """135 tokens (270 latent rows, patch 2): band j is harmonic j; before, harmonic 1 joined the zero frequency."""
    index = axis_bin_index(270, 2, 67)
    assert index.tolist() == list(range(67)) + [66]  # harmonics 0..67; the last band also takes 67
    assert axis_bin_index(256, 2, 64).tolist() == list(range(64)) + [63]  # even lengths: as before


def test_official_ntk_factors():
    d = 56
    s = 4.0
    official = official_ntk_factor(s, d)
    assert official == pytest.approx(s ** (2 * d / (d - 2)) / (1 + 0.1 * math.log(s)), rel=0, abs=0)
    assert official / port_ntk_factor(s, d) == pytest.approx(3.7, abs=0.05)  # "3.7x the port's at s = 4"
    assert official_ntk_factor(1.0, d) == 1.0 and official_ntk_factor(0.5, d) == 1.0  # never below 1
    assert port_ntk_factor(1.0, d) == 1.0
    # Qwen-Image: the smaller axis takes 1 + (small/big)(ntk_big - 1), even below its trained size
    h, w = official_qwen_ntk_factors(2.0, 4.0, d)
    assert w == official and h == pytest.approx(1 + 0.5 * (official - 1))
    h, w = official_qwen_ntk_factors(4.0, 0.5, d)
    assert h == official and w == pytest.approx(1 + 0.125 * (official - 1)) and w > 1
    assert official_qwen_ntk_factors(3.0, 3.0, d) == (official_ntk_factor(3.0, d),) * 2
    # the frequencies are the code's float64 ones: 1 / (theta * factor) ** (2k / d)
    freqs = ntk_frequencies(d, 10000.0, official)
    want = 1.0 / (10000.0 * official) ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    assert torch.equal(freqs, want)


def test_recipe_labels_and_rules():
    assert [recipe_from_label(x) for x in ("paper (official SEGA code)", "diffusers port", "refined (ours)",
                                            "paper", "port", "refined")] == ["paper", "port", "refined"] * 2
    with pytest.raises(ValueError, match="official SEGA code"):
        recipe_from_label("published")
    paper, port = recipe_rules("paper"), recipe_rules("port")
    assert (paper.spectrum, paper.per_sample, paper.global_scale) == ("embedding", False, True)
    assert (port.spectrum, port.per_sample, port.global_scale) == ("tokens", True, False)
    assert SegaSettings().recipe == "paper"
    with pytest.raises(ValueError, match="recipe"):
        SegaSettings(recipe="published")


def test_port_batch_mean_vs_per_sample_size():
    """The port's code averages the token map over the batch; the "diffusers port" recipe keeps one spectrum per
    sample, as the pack promises (docs/differences.md row). The size of that difference for a batch of two different images
    (a 1/f map and white noise) at 4096² (256 tokens, s = 4)."""
    settings = SegaSettings()
    maps = torch.stack([_one_over_f_map(256, 256, seed=2), torch.randn(256, 256, generator=torch.Generator()
                                                                        .manual_seed(3), dtype=torch.float64)])
    maps = maps[:, None].float()
    per_sample = token_map_spectrum(maps, settings)
    batch = token_map_spectrum(maps, settings, per_sample=False)
    freqs = ntk_frequencies(56, 10000.0, port_ntk_factor(4.0, 56))[None]
    m_sample = axis_temperatures(freqs, None, per_sample.axis_w, per_sample.spread, 4.0, settings)
    m_batch = axis_temperatures(freqs, None, batch.axis_w, batch.spread, 4.0, settings)
    worst = float((m_sample - m_batch).abs().max())
    print(f"port, batch of a 1/f map and white noise at 4096²: per sample vs batch mean differ by up to {worst:.4f}")
    assert worst > 1e-3
