"""spectral/hiflow.py and rope/hiflow_stage.py against the independent transcription of the official code
(tests/hiflow_reference.py). Pure torch, no ComfyUI."""

from __future__ import annotations

import math

import hiflow_reference as ref
import pytest
import torch


@pytest.fixture(scope="module")
def hf():
    import host

    return host.pack_submodule("spectral.hiflow")


@pytest.fixture(scope="module")
def scale():
    import host

    return host.pack_submodule("rope.hiflow_stage")


@pytest.mark.parametrize(("h", "w", "ratio"), [(16, 16, 0.2), (18, 18, 0.2), (10, 14, 0.5), (8, 8, 0.0)])
def test_butterworth_mask_matches_the_official_loop(hf, h, w, ratio):
    torch.testing.assert_close(hf.butterworth_mask(h, w, ratio), ref.butterworth(h, w, ratio).float(),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(("h", "w"), [(16, 16), (18, 18), (9, 12)])
def test_structure_alignment_matches_a_plain_dft(hf, h, w):
    gen = torch.Generator().manual_seed(h * w)
    x0, x0_ref = torch.randn(2, 3, h, w, generator=gen), torch.randn(2, 3, h, w, generator=gen)
    mask64 = ref.butterworth(h, w, 0.3)
    got = hf.align_structure(x0, x0_ref, hf.butterworth_mask(h, w, 0.3), 0.7)
    want = x0.double() + 0.7 * (ref.low_pass(x0_ref.double(), mask64) - ref.low_pass(x0.double(), mask64))
    torch.testing.assert_close(got.double(), want, rtol=0, atol=2e-5)
    torch.testing.assert_close(hf.align_structure(x0, x0_ref, hf.butterworth_mask(h, w, 0.3), 0.0), x0)
    # On even grids the mask is 1 at the centred DC bin, so a constant passes whole; on odd grids the official
    # d² is not 0 there (2h/H - 1 at h = H//2), so even the mean is damped: a fact of the code (docs/hiflow.md).
    flat = torch.full((1, 1, h, w), 2.5)
    kept = hf.low_pass(flat, hf.butterworth_mask(h, w, 0.2))
    if h % 2 == 0 and w % 2 == 0:
        torch.testing.assert_close(kept, flat, rtol=0, atol=1e-5)
    else:
        assert float(kept.mean()) < 2.5 - 1e-3


def test_swin_pad_crop_and_grid_matching(hf):
    x = torch.randn(1, 4, 6, 8)
    padded = hf.swin_pad(x)
    assert padded.shape[-2:] == (8, 10)
    torch.testing.assert_close(padded, ref.pad_one(x))
    torch.testing.assert_close(hf.swin_crop(padded), x)
    assert hf.swin_step(x, 0).shape[-2:] == (8, 10) and hf.swin_step(padded, 1).shape[-2:] == (6, 8)
    torch.testing.assert_close(hf.match_grid(x, padded), ref.pad_one(x))
    torch.testing.assert_close(hf.match_grid(padded, x), ref.crop_one(padded))
    assert hf.match_grid(x, x) is x
    five = torch.randn(1, 4, 1, 6, 8)  # Qwen-Image's single-frame latents
    assert hf.swin_pad(five).shape == (1, 4, 1, 8, 10)
    with pytest.raises(ValueError, match="swin moves one pixel"):
        hf.match_grid(x, torch.zeros(1, 4, 12, 12))


def test_stage_weights_decay_and_sigmas_are_the_tail(hf):
    assert hf.stage_weights(1.0, 0.5, 16, 0) == (1.0, 0.5)
    assert hf.stage_weights(0.25, 0.5, 10, 9) == pytest.approx((0.025, 0.05))
    base = ref.official_sigmas(30, lambda t: 3 * t / (1 + 2 * t))
    tail = hf.stage_sigmas(base, 16)
    assert tail.shape[0] == 17 and tail[-1] == 0
    torch.testing.assert_close(tail, base[14:])
    torch.testing.assert_close(hf.schedule_times(30), torch.tensor([1 - i * (29 / 30) / 29 for i in range(30)],
                                                                   dtype=torch.float64))
    with pytest.raises(ValueError, match="1..30"):
        hf.stage_sigmas(base, 31)


def test_acceleration_alignment_matches_the_official_update(hf):
    v, vr, vp, vrp = (torch.randn(3, 5) for _ in range(4))
    torch.testing.assert_close(hf.align_acceleration(v, vr, vp, vrp, 0.4), v + 0.4 * (vp + vr - vrp - v))
    x, x0 = torch.randn(3, 5), torch.randn(3, 5)
    torch.testing.assert_close(hf.velocity(x, x0, 0.5), (x - x0) / (0.5 + 1e-6))


@pytest.mark.parametrize("sigma", [0.1, 0.9, 2.0])
def test_sharpen_matches_torchvisions_blur_transcribed(hf, sigma):
    image = torch.rand(1, 3, 7, 9, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(hf.sharpen(image.double(), sigma), ref.sharpen(image, sigma), rtol=0, atol=1e-12)
    assert hf.sharpen(image, sigma, amount=0.0) is image


def test_blur_width_is_seeded_in_the_official_range(hf):
    draws = [hf.blur_width(seed, 0) for seed in range(40)]
    assert all(0.1 <= d <= 2.0 for d in draws) and len(set(draws)) == 40
    assert hf.blur_width(7, 1) == hf.blur_width(8, 0)  # the rule is seed + stage
    assert hf.blur_width(7, 1) == hf.blur_width(7, 1)


def test_ntk_theta_and_proportional_temperature(scale):
    assert scale.ntk_theta(10000.0, 10.0) == 100000.0
    t_flux = scale.trained_attention_tokens(64 * 64)
    assert t_flux == 4608
    assert scale.proportional_temperature(4608, t_flux) == 1.0
    n = 512 + 256 * 256  # 4096²
    m = scale.proportional_temperature(n, t_flux)
    head_dim = 128
    # m on q and on k: the logits scale by m², i.e. softmax scale sqrt(log_T(N) / d) (utils.py)
    assert m**2 / math.sqrt(head_dim) == pytest.approx(math.sqrt(math.log(n, 4608) / head_dim), rel=1e-12)
    with pytest.raises(ValueError, match="NTK factor"):
        scale.ntk_theta(10000.0, 0.0)


def test_a_whole_stage_without_a_model_matches_the_official_loop(hf):
    """A synthetic denoiser; the official stateful loop (reference) vs the step functions composed as the sampler
    composes them (nodes/cascade/hiflow.py uses the same functions)."""
    gen = torch.Generator().manual_seed(0)
    base = ref.official_sigmas(6, lambda t: 3 * t / (1 + 2 * t))
    sig = hf.stage_sigmas(base, 4)
    stored = {k: torch.randn(1, 2, 6 + 2 * ((k - 2) % 2 == 0), 6 + 2 * ((k - 2) % 2 == 0), generator=gen)
              for k in range(2, 6)}
    x_start = torch.randn(1, 2, 12, 12, generator=gen, dtype=torch.float64)

    def denoise(x, s):
        return 0.8 * x * (1 - s) + 0.1 * torch.roll(x, 1, -1)

    official = ref.Stage(sig, stored, 1.0, 0.5, 0.2)
    x = x_start.clone()
    for i in range(4):
        x = official.prepare(x, i)
        x = official.step(x, denoise(x, float(sig[i])), i, 2 + i)
    ours = x_start.clone()
    v_prev = v_ref_prev = None
    for i in range(4):
        ours = hf.swin_step(ours, i)
        x0 = denoise(ours, float(sig[i]))
        x0_ref = hf.resize_like(stored[2 + i].double(), ours)
        alpha, beta = hf.stage_weights(1.0, 0.5, 4, i)
        mask = hf.butterworth_mask(*ours.shape[-2:], 0.2).double()
        v = hf.velocity(ours, hf.align_structure(x0, x0_ref, mask, alpha), sig[i])
        v_ref = hf.velocity(ours, x0_ref, sig[i])
        if v_prev is not None:
            v = hf.align_acceleration(v, v_ref, hf.match_grid(v_prev, ours), hf.match_grid(v_ref_prev, ours), beta)
        v_prev, v_ref_prev = v, v_ref
        ours = ours + (sig[i + 1] - sig[i]) * v
    torch.testing.assert_close(ours, x, rtol=0, atol=1e-6)  # the mask is float32, as the official one


def test_official_schedule_is_flux_dev_dynamic_shift(hf):
    # calculate_shift on FLUX.1-dev's scheduler config: (256 tokens, 0.5) to (4096, 1.15), linear, not clamped
    assert hf.dynamic_mu(4096) == pytest.approx(1.15, abs=1e-12)
    assert hf.dynamic_mu(256) == pytest.approx(0.5, abs=1e-12)
    assert hf.dynamic_mu(64 * 48) == pytest.approx(0.5 + 0.65 * (3072 - 256) / 3840, abs=1e-12)
    t = [1.0 - i * (1.0 - 1.0 / 30) / 29 for i in range(30)]
    sigmas = hf.dynamic_sigmas(30, 1.15)
    want = [math.exp(1.15) / (math.exp(1.15) + 1 / x - 1) for x in t] + [0.0]
    torch.testing.assert_close(sigmas, torch.tensor(want, dtype=torch.float64), rtol=0, atol=1e-12)
    # the exponential shift at mu = ln s is the static shift s: the two rules meet there
    torch.testing.assert_close(hf.dynamic_sigmas(30, math.log(3.0)), hf.static_sigmas(30, 3.0), rtol=0, atol=1e-12)
    assert float((hf.static_sigmas(30, 3.0) - sigmas).abs().max()) == pytest.approx(0.01283, abs=1e-4)
