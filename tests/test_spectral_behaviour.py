"""SEGA behaviour beyond the reference values: physical cycles-per-token binning, per-sample independence,
zero-sum temperatures, robustness to degenerate latents, and no host sync on the per-step path."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import torch

from spectral import (
    MAX_ALPHA,
    SegaSettings,
    axis_band_count,
    axis_bin_index,
    axis_temperatures,
    band_positions,
    latent_spectrum,
    pair_scales,
    port_pair_scales,
    reference_temperature,
)

PACK = Path(__file__).resolve().parents[1]
SETTINGS = SegaSettings(floor=0.0)  # the exact zero-sum variant: properties below are exact, not clamped
M_REF = reference_temperature(4.0, SETTINGS.kappa)


def ntk_freqs(scale: float = 4.0, dim: int = 56, theta: float = 10000.0) -> torch.Tensor:
    return 1.0 / (theta * scale ** (dim / (dim - 2))) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def random_latent(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def axis_scales(latent: torch.Tensor, patch: int, freqs: torch.Tensor, settings: SegaSettings = SETTINGS):
    spectrum = latent_spectrum(latent, patch, settings)
    m_h = pair_scales(freqs, spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, settings, spectrum.valid)
    m_w = pair_scales(freqs, spectrum.band_w, spectrum.axis_w, spectrum.spread, M_REF, settings, spectrum.valid)
    return spectrum, m_h, m_w


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
    m = pair_scales(freqs[None], bands, energy, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
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
    m = pair_scales(freqs[None], bands, energy, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
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
        pair_scales(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, SETTINGS), m_h
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
    m = pair_scales(freqs, spectrum.band_h, spectrum.axis_h, spectrum.spread, M_REF, SETTINGS, spectrum.valid)
    for i in range(2):
        alone = pair_scales(
            freqs[i],
            spectrum.band_h,
            spectrum.axis_h[i : i + 1],
            spectrum.spread[i : i + 1],
            M_REF,
            SETTINGS,
            spectrum.valid[i : i + 1],
        )
        torch.testing.assert_close(m[i], alone[0], rtol=0, atol=1e-15)


# --- temperatures -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scales_fn", ["physical", "port"])
def test_zero_sum_without_floor(scales_fn: str) -> None:
    spectrum = latent_spectrum(random_latent(4, 16, 64, 80, seed=5) * torch.linspace(0.2, 3, 80), 2, SETTINGS)
    spread = torch.tensor([1.0, 0.5, 0.2, 0.9], dtype=torch.float64)
    freqs = ntk_freqs()[None]
    if scales_fn == "physical":
        m = pair_scales(freqs, spectrum.band_w, spectrum.axis_w, spread, M_REF, SETTINGS, spectrum.valid)
    else:
        m = port_pair_scales(freqs, spectrum.axis_w, spread, M_REF, SETTINGS, spectrum.valid)
    torch.testing.assert_close(m.mean(dim=1), torch.full((4,), M_REF, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (m - M_REF).abs().amax() > 1e-3  # it does steer
    assert (m - M_REF).abs().amax() <= M_REF * SETTINGS.alpha * 2 + 1e-12  # |s| <= 2


def test_floor_bounds_every_pair_in_every_case() -> None:
    """The tooltip's promise: the floor bounds every pair, also where SEGA does not steer (sigma 0, alpha 0,
    invalid latent); with floor <= m_ref that is the port's result (it returns m_ref unclamped there)."""
    spectrum = latent_spectrum(random_latent(2, 16, 64, 64, seed=6), 2, SETTINGS)
    floored = SegaSettings(floor=M_REF)
    spread = torch.tensor([1.0, 0.0], dtype=torch.float64)
    m = pair_scales(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spread, M_REF, floored, spectrum.valid)
    assert (m[0] >= M_REF).all() and (m[0] > M_REF).any()
    assert (m[1] == M_REF).all()
    high_floor = SegaSettings(floor=2.0)
    for settings, sigma, valid in (
        (high_floor, spread + 1, torch.tensor([False, False])),  # degenerate latent
        (high_floor, torch.zeros(2, dtype=torch.float64), spectrum.valid),  # sigma = 0 (spread_max 0)
        (SegaSettings(alpha=0.0, floor=2.0), spread + 1, spectrum.valid),  # alpha = 0
    ):
        m = pair_scales(ntk_freqs(), spectrum.band_h, spectrum.axis_h, sigma, M_REF, settings, valid)
        assert (m == 2.0).all()


def test_alpha_zero_or_no_spread_gives_m_ref() -> None:
    spectrum = latent_spectrum(random_latent(2, 16, 64, 64, seed=7), 2, SETTINGS)
    ones = torch.ones(2, dtype=torch.float64)
    for settings, spread in ((SegaSettings(alpha=0.0), ones), (SegaSettings(spread_max=0.0), ones * 0)):
        m = pair_scales(ntk_freqs(), spectrum.band_h, spectrum.axis_h, spread, M_REF, settings)
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
    m = pair_scales(ntk_freqs(), bands, energy, torch.ones(3, dtype=torch.float64), M_REF, SETTINGS)
    assert m.isfinite().all()
    assert (m[1] == M_REF).all()  # all bands equal -> z = 0 -> s = 0
    one_band = pair_scales(ntk_freqs(), bands[:1], energy[:, :1], torch.ones(3, dtype=torch.float64), M_REF, SETTINGS)
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
        m = pair_scales(freqs, band, energy, spectrum.spread, M_REF, SegaSettings(floor=0.9), spectrum.valid)
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
        assert torch.equal(rank, port_pair_scales(freqs, *args, SegaSettings(floor=floor), spectrum.valid))
        settings = SegaSettings(floor=floor, allocation="frequency")
        physical = axis_temperatures(freqs, spectrum.band_w, spectrum.axis_w, spectrum.spread, 4.0, settings,
                                     spectrum.valid)
        assert torch.equal(physical, pair_scales(freqs, spectrum.band_w, *args, settings, spectrum.valid))
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
