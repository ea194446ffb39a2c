"""SEGA behaviour beyond the reference values, the temperatures' side: zero-sum temperatures and their bounds,
robustness to degenerate latents, no host sync on the per-step path, the allocation and m_ref options. (The
spectrum's side: test_spectral_bands.py.)"""

from __future__ import annotations

import ast
import math

import pytest
import torch
from spectral_cases import M_REF, PACK, SETTINGS, axis_scales, ntk_freqs, random_latent

from spectral import MAX_ALPHA, SegaSettings, axis_temperatures, latent_spectrum, reference_temperature
from spectral.allocation import pair_temperatures, port_pair_temperatures

# --- temperatures -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scales_fn", ["physical", "port"])
def test_zero_sum_without_floor(scales_fn: str) -> None:
    spectrum = latent_spectrum(random_latent(4, 16, 64, 80, seed=5) * torch.linspace(0.2, 3, 80), 2, SETTINGS)
    spread = torch.tensor([1.0, 0.5, 0.2, 0.9], dtype=torch.float64)
    freqs = ntk_freqs()[None]
    if scales_fn == "physical":
        m = pair_temperatures(freqs, spectrum.band_w, spectrum.axis_w, spread, M_REF, SETTINGS, spectrum.valid)
    else:
        m = port_pair_temperatures(freqs, spectrum.axis_w, spread, M_REF, SETTINGS, spectrum.valid)
    torch.testing.assert_close(m.mean(dim=1), torch.full((4,), M_REF, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (m - M_REF).abs().amax() > 1e-3  # it does steer
    assert (m - M_REF).abs().amax() <= M_REF * SETTINGS.alpha * 2 + 1e-12  # |s| <= 2


def test_floor_bounds_every_pair_in_every_case() -> None:
    """The tooltip's promise: the floor bounds every pair, also where SEGA does not steer (sigma 0, alpha 0,
    invalid latent); with floor <= m_ref that is the port's result (it returns m_ref unclamped there)."""
    spectrum = latent_spectrum(random_latent(2, 16, 64, 64, seed=6), 2, SETTINGS)
    floored = SegaSettings(floor=M_REF)
    spread = torch.tensor([1.0, 0.0], dtype=torch.float64)
    m = pair_temperatures(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spread, M_REF, floored, spectrum.valid)
    assert (m[0] >= M_REF).all() and (m[0] > M_REF).any()
    assert (m[1] == M_REF).all()
    high_floor = SegaSettings(floor=2.0)
    for settings, sigma, valid in (
        (high_floor, spread + 1, torch.tensor([False, False])),  # degenerate latent
        (high_floor, torch.zeros(2, dtype=torch.float64), spectrum.valid),  # sigma = 0 (spread_max 0)
        (SegaSettings(alpha=0.0, floor=2.0), spread + 1, spectrum.valid),  # alpha = 0
    ):
        m = pair_temperatures(ntk_freqs(), spectrum.band_h, spectrum.axis_h, sigma, M_REF, settings, valid)
        assert (m == 2.0).all()


def test_alpha_zero_or_no_spread_gives_m_ref() -> None:
    spectrum = latent_spectrum(random_latent(2, 16, 64, 64, seed=7), 2, SETTINGS)
    ones = torch.ones(2, dtype=torch.float64)
    for settings, spread in ((SegaSettings(alpha=0.0), ones), (SegaSettings(spread_max=0.0), ones * 0)):
        m = pair_temperatures(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spread, M_REF, settings)
        assert (m == M_REF).all()


@pytest.mark.parametrize("allocation", ["rank", "frequency"])
def test_temperatures_stay_positive_at_every_legal_setting(allocation: str) -> None:
    """alpha <= 0.5 with |s_d| <= 2 (n - 1)/n keeps m_d >= m_ref / n > 0 for any beta, spread and energies."""
    energies = torch.tensor([[1e-30] * 15 + [1e30], [1e30] + [1e-30] * 15, [1.0] * 8 + [1e-12] * 8],
                            dtype=torch.float64)
    bands = torch.arange(16, dtype=torch.float64) / 32
    freqs = ntk_freqs()
    ones = torch.ones(3, dtype=torch.float64)
    for beta in (1.5, 10.0):
        settings = SegaSettings(alpha=MAX_ALPHA, beta=beta, floor=0.0, allocation=allocation)
        m = axis_temperatures(freqs, bands, energies, ones, 4.0, settings)
        assert (m >= M_REF / freqs.numel() - 1e-12).all() and (m > 0).all()
    if allocation == "rank":  # one pair alone on a huge band: the bound is nearly reached, the range limit matters
        assert m.amin() < 0.2 * M_REF
    with pytest.raises(ValueError, match="alpha must be <= 0.5"):
        SegaSettings(alpha=1.0, beta=10.0)  # issue 9: this gave -0.59


def test_zero_energy_bands_stay_finite() -> None:
    energy = torch.tensor([[0.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1e30, 1e-40]], dtype=torch.float64)
    bands = torch.tensor([0.0, 0.1, 0.2, 0.4], dtype=torch.float64)
    m = pair_temperatures(ntk_freqs(), bands, energy, torch.ones(3, dtype=torch.float64), M_REF, SETTINGS)
    assert m.isfinite().all()
    assert (m[1] == M_REF).all()  # all bands equal -> z = 0 -> s = 0
    one_band = pair_temperatures(ntk_freqs(), bands[:1], energy[:, :1], torch.ones(3, dtype=torch.float64), M_REF, SETTINGS)
    assert (one_band == M_REF).all()


# --- degenerate latents -----------------------------------------------------------------------------------------


def _poison(kind: str, latent: torch.Tensor) -> torch.Tensor:
    out = latent.clone()
    if kind == "zeros":
        return torch.zeros_like(out)
    if kind == "constant":
        return torch.full_like(out, 0.37)
    if kind == "huge_constant":
        return torch.full_like(out, 3e38)
    if kind == "overflow":
        return out * 3e38
    value = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}[kind]
    out[..., 3, 5] = value
    return out


@pytest.mark.parametrize("kind", ["zeros", "constant", "huge_constant", "overflow", "nan", "inf", "-inf"])
@pytest.mark.parametrize("frames", [None, 2])
def test_degenerate_latents_fall_back_to_m_ref(kind: str, frames: int | None) -> None:
    shape = (2, 16, 32, 48) if frames is None else (2, 16, frames, 32, 48)
    good = random_latent(*shape, seed=8)
    latent = torch.cat([good[:1], _poison(kind, good[1:])])
    settings = SegaSettings(floor=1.3, spread_min=0.2)
    spectrum, m_h, m_w = axis_scales(latent, 2, ntk_freqs()[None], settings)
    assert spectrum.valid.tolist() == [True, False]
    for name in ("axis_h", "axis_w", "radial", "spread"):
        assert getattr(spectrum, name).isfinite().all(), name
    assert spectrum.spread[1].item() == 0.2
    assert (m_h[1] == 1.3).all() and (m_w[1] == 1.3).all()  # m_ref, raised to the floor (1.3 > m_ref)
    _, alone_h, alone_w = axis_scales(good[:1], 2, ntk_freqs()[None], settings)
    torch.testing.assert_close(m_h[0], alone_h[0], rtol=1e-6, atol=0)  # the healthy sample is untouched
    torch.testing.assert_close(m_w[0], alone_w[0], rtol=1e-6, atol=0)


def test_constant_frames_of_a_video_are_invalid() -> None:
    latent = torch.arange(3, dtype=torch.float32).reshape(1, 1, 3, 1, 1).expand(1, 4, 3, 16, 16)
    assert latent_spectrum(latent, 2, SETTINGS).valid.tolist() == [False]


def test_tiny_grids() -> None:
    for height, width in [(1, 1), (2, 2), (3, 5), (8, 8)]:
        spectrum, m_h, m_w = axis_scales(random_latent(1, 4, height, width, seed=9), 2, ntk_freqs()[None])
        assert m_h.isfinite().all() and m_w.isfinite().all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_latents(dtype: torch.dtype) -> None:
    latent = random_latent(2, 16, 48, 64, seed=10).to(dtype)
    before = latent.clone()
    low = latent_spectrum(latent, 2, SETTINGS)
    ref = latent_spectrum(latent.float(), 2, SETTINGS)
    assert torch.equal(latent, before)  # never modified in place
    assert low.axis_h.dtype == torch.float64 and low.valid.all()
    torch.testing.assert_close(low.radial, ref.radial, rtol=1e-5, atol=0)
    torch.testing.assert_close(low.spread, ref.spread, rtol=1e-5, atol=0)


def test_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="latent"):
        latent_spectrum(torch.zeros(16, 8, 8), 2, SETTINGS)
    with pytest.raises(ValueError, match="patch_size"):
        latent_spectrum(torch.zeros(1, 16, 8, 8), 0, SETTINGS)


# --- no host sync, no forbidden imports ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 16, 64, 48), (2, 16, 3, 64, 48)])
def test_per_step_path_runs_on_meta_tensors(shape: tuple[int, ...]) -> None:
    """Meta tensors hold no data: any .item()/.cpu()/.tolist() or data-dependent shape on the path would raise."""
    latent = torch.empty(shape, device="meta")
    spectrum = latent_spectrum(latent, 2, SegaSettings(floor=0.9))
    freqs = torch.empty(2, 28, dtype=torch.float64, device="meta")
    for band, energy in ((spectrum.band_h, spectrum.axis_h), (spectrum.band_w, spectrum.axis_w)):
        m = pair_temperatures(freqs, band, energy, spectrum.spread, M_REF, SegaSettings(floor=0.9), spectrum.valid)
        assert m.device.type == "meta" and m.shape == (2, 28)


def test_spectral_never_imports_comfy_or_numpy() -> None:
    for path in (PACK / "spectral").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in ("comfy", "numpy", "comfy_extras", "nodes"), (path.name, name)


# --- options: allocation and m_ref ------------------------------------------------------------------------------


def test_defaults_are_the_port_recipe() -> None:
    assert SegaSettings() == SegaSettings(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0,
                                          spread_alpha=1.5, floor=1.0, allocation="rank", m_ref="power")


def test_allocation_option_picks_the_function() -> None:
    spectrum = latent_spectrum(random_latent(2, 16, 64, 80, seed=11) * torch.linspace(0.2, 3, 80), 2, SETTINGS)
    freqs = ntk_freqs()[None]
    args = (spectrum.axis_w, spectrum.spread, M_REF)
    for floor in (0.0, 1.0):
        rank = axis_temperatures(freqs, spectrum.band_w, spectrum.axis_w, spectrum.spread, 4.0,
                                 SegaSettings(floor=floor), spectrum.valid)
        assert torch.equal(rank, port_pair_temperatures(freqs, *args, SegaSettings(floor=floor), spectrum.valid))
        settings = SegaSettings(floor=floor, allocation="frequency")
        physical = axis_temperatures(freqs, spectrum.band_w, spectrum.axis_w, spectrum.spread, 4.0, settings,
                                     spectrum.valid)
        assert torch.equal(physical, pair_temperatures(freqs, spectrum.band_w, *args, settings, spectrum.valid))
        assert not torch.allclose(rank, physical)
    with pytest.raises(ValueError, match="band_freqs"):
        axis_temperatures(freqs, None, spectrum.axis_w, spectrum.spread, 4.0, SegaSettings(allocation="frequency"))


@pytest.mark.parametrize("allocation", ["rank", "frequency"])
@pytest.mark.parametrize("scale", [1.5, 4.0, 6.25])
def test_m_ref_yarn_only_redistributes_yarns_temperature(allocation: str, scale: float) -> None:
    spectrum = latent_spectrum(random_latent(3, 16, 64, 64, seed=12), 2, SETTINGS)
    settings = SegaSettings(floor=0.0, m_ref="yarn", allocation=allocation)
    m = axis_temperatures(ntk_freqs(scale), spectrum.band_h, spectrum.axis_h, spectrum.spread, scale, settings,
                          spectrum.valid)
    yarn = 0.1 * math.log(scale) + 1.0
    torch.testing.assert_close(m.mean(-1), torch.full((3,), yarn, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (m - yarn).abs().amax() > 1e-3
    power = axis_temperatures(ntk_freqs(scale), spectrum.band_h, spectrum.axis_h, spectrum.spread, scale,
                              SegaSettings(floor=0.0, allocation=allocation), spectrum.valid)
    torch.testing.assert_close(power.mean(-1), torch.full((3,), scale**0.08, dtype=torch.float64), rtol=0,
                               atol=1e-12)
    assert reference_temperature(scale, 0.08, "yarn") == pytest.approx(yarn, abs=1e-15)
