"""spectral/imax.py and rope/imax_stage.py against the independent transcription of the official I-Max code
(tests/imax_reference.py). Pure torch, no ComfyUI."""

from __future__ import annotations

import math

import imax_reference as ref
import pytest
import torch


@pytest.fixture(scope="module")
def im():
    import host

    return host.pack_submodule("spectral.imax")


@pytest.fixture(scope="module")
def stage():
    import host

    return host.pack_submodule("rope.imax_stage")


@pytest.mark.parametrize(("h", "w", "level"), [(8, 8, 1), (10, 6, 1), (18, 14, 2), (6, 10, 3), (258, 6, 2), (7, 9, 2)])
def test_haar_low_pass_is_pywavelets_approximation(im, h, w, level):
    """pywt's wavedec2 / waverec2 ('haar', 'symmetric'), details zeroed, as filter-bank loops; odd sides too."""
    x = torch.randn(2, 3, h, w, generator=torch.Generator().manual_seed(h * w + level), dtype=torch.float64)
    torch.testing.assert_close(im.haar_low_pass(x, level), ref.low_pass(x, level), rtol=0, atol=1e-12)
    if h % 2 == 0 and w % 2 == 0:  # level 1 on an even grid: the 2 x 2 block mean
        block = x.unflatten(-2, (h // 2, 2)).unflatten(-1, (w // 2, 2)).mean(dim=(-3, -1))
        torch.testing.assert_close(im.haar_low_pass(x, 1), block.repeat_interleave(2, -2).repeat_interleave(2, -1))


def test_haar_low_pass_on_single_frame_latents(im):
    x = torch.randn(1, 4, 1, 6, 8, dtype=torch.float64)
    torch.testing.assert_close(im.haar_low_pass(x, 2)[:, :, 0], ref.low_pass(x[:, :, 0], 2), rtol=0, atol=1e-12)


@pytest.mark.parametrize("schedule", ["cosine_decay", "cosine_shift", "constant", "disable"])
@pytest.mark.parametrize(("steps", "level", "swin"), [(6, 1, True), (5, 2, True), (4, 1, False)])
def test_stage_steps_match_the_official_loop(im, schedule, steps, level, swin):
    """The official extrapolated-resolution loop (swin on the latent and the guide, projection, wavelet split,
    schedule, Euler) step by step, from the same model velocities."""
    gen = torch.Generator().manual_seed(steps * 7 + level)
    sigmas = ref.static_sigmas(steps, 6.0)
    guide = torch.randn(1, 4, 8, 10, generator=gen, dtype=torch.float64)
    official = ref.Stage(sigmas, guide, schedule, level, swin)
    x = ours = torch.randn(1, 4, 8, 10, generator=gen, dtype=torch.float64)
    for i in range(steps):
        x = official.prepare(x, i)
        ours = ours if not swin else (torch.nn.functional.pad(ours, (1, 1, 1, 1)) if i % 2 == 0 else ours[..., 1:-1, 1:-1])
        velocity = torch.randn(x.shape, generator=gen, dtype=torch.float64)
        x = official.step(x, velocity, i)
        sigma = sigmas[i]
        target = im.projected_velocity(ours, im.pad_like(guide, ours), sigma)
        guided = im.project(velocity, target, im.guidance_weight(i, steps), schedule, level)
        ours = ours + (sigmas[i + 1] - sigma) * guided
        torch.testing.assert_close(ours, x, rtol=0, atol=1e-12)


def test_guidance_weight_runs_from_one_toward_zero(im):
    assert im.guidance_weight(0, 30) == 1.0
    assert im.guidance_weight(15, 30) == pytest.approx(0.5)
    assert im.guidance_weight(29, 30) == pytest.approx(0.5 * (1 + math.cos(math.pi * 29 / 30)))
    with pytest.raises(ValueError, match="outside a pass"):
        im.guidance_weight(30, 30)
    with pytest.raises(ValueError, match="'guidance_schedule' must be one of"):
        im.project(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2), 1.0, "cosine")


def test_guide_is_zero_padded_on_a_padded_step(im):
    guide = torch.randn(1, 2, 4, 6)
    padded = im.pad_like(guide, torch.zeros(1, 2, 6, 8))
    assert padded.shape[-2:] == (6, 8) and float(padded[..., 0, :].abs().max()) == 0.0
    torch.testing.assert_close(padded[..., 1:-1, 1:-1], guide)
    assert im.pad_like(guide, guide) is guide
    with pytest.raises(ValueError, match="does not match"):
        im.pad_like(guide, torch.zeros(1, 2, 5, 5))


@pytest.mark.parametrize(("image_tokens", "copies"), [(64 * 64, 1), (258 * 258, 16), (128 * 128, 4), (100, 1),
                                                      (257 * 257, 16), (96 * 64, 1)])
@pytest.mark.parametrize(("dim", "factor"), [(16, 10.0), (56, 10.0), (56, 4.0), (128, 1.0)])
def test_ntk_frequencies_with_the_clip_match_the_official_rope(stage, image_tokens, copies, dim, factor):
    """The official rope() counts S - 512, S = 512 text tokens per copy + the image tokens."""
    got = stage.imax_frequencies(dim, 10_000.0, factor, stage.clip_tokens(image_tokens, copies), 64 * 64)
    want = ref.omega(dim, 10_000.0, factor, 512 * copies + image_tokens)
    torch.testing.assert_close(got, want, rtol=1e-15, atol=0)


def test_clip_switches_from_ntk_to_interpolation_along_the_pairs(stage):
    """At 4096² (256² tokens, no duplication) the clip is PI by 4: NTK x 10 keeps the pairs with 10^(-2j/d) > 1/4."""
    freqs = stage.imax_frequencies(128, 10_000.0, 10.0, 256 * 256, 64 * 64)
    exponent = torch.arange(0, 128, 2, dtype=torch.float64) / 128
    ntk_wins = 10.0 ** (-exponent) > 0.25
    assert 0 < int(ntk_wins.sum()) < 64
    torch.testing.assert_close(freqs[ntk_wins], 1 / (1e5 ** exponent[ntk_wins]))
    torch.testing.assert_close(freqs[~ntk_wins], 1 / (1e4 ** exponent[~ntk_wins]) / 4)


@pytest.mark.parametrize(("rows", "cols"), [(258, 258), (129, 129), (63, 200), (256, 128), (64, 64)])
def test_text_duplication_ids_match_the_official_offsets(im, stage, rows, cols):
    text = torch.zeros(2, 5, 3)
    text[..., 0] = torch.arange(5).float()  # whatever the first column holds is kept
    got = stage.duplicated_text_ids(text, im.text_copies(rows, cols, 64, 64), (64, 64))
    torch.testing.assert_close(got, ref.text_duplication(text, rows, cols), rtol=0, atol=0)


def test_bad_numbers_are_refused(im, stage):
    with pytest.raises(ValueError, match="wavelet level"):
        im.haar_low_pass(torch.zeros(1, 1, 4, 4), 0)
    with pytest.raises(ValueError, match="even dimension"):
        stage.imax_frequencies(15, 1e4, 10.0, 100, 4096)
    with pytest.raises(ValueError, match="must be > 0"):
        stage.imax_frequencies(16, 1e4, 0.0, 100, 4096)
    with pytest.raises(ValueError, match=">= 1"):
        stage.clip_tokens(0)
