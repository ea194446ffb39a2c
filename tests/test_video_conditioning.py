"""DyPE and SEGA on the video DiTs with their conditioning on the real host: image-to-video inputs and references
never inflate the scale, Wan 2.2's high/low-noise pair hands over one schedule, Wan's in-context streams share the
target's scale, and the schedule preview orients the trained grid like the video."""

from __future__ import annotations

import pytest
import tiny_video
import torch
from capture import capture
from video_patching import (
    GRID,
    _pack,
    dype,
    expected_table,
    long_px,
    sega,
    sega_temperatures,
    trained_grid,
)

pytestmark = pytest.mark.usefixtures("comfy_host")


# --- image-to-video conditioning never inflates the scale -----------------------------------------------------


def test_wan_i2v_concat_and_clip_vision_never_inflate_the_scale():
    fam = tiny_video.FAMILIES["wan21_i2v"]
    model = tiny_video.build("wan21_i2v")
    base_px = long_px(fam)
    # the start image's latent at 4x the video's size (the model resizes it) and 257 clip-vision tokens
    positive = fam.cond(7, 1, concat_latent_image=torch.randn(1, 16, 2, 32, 64),
                        concat_mask=torch.zeros(1, 1, 2, 32, 64), clip_vision_output=tiny_video.clip_vision_output())
    negative = fam.cond(5, 2, concat_latent_image=torch.randn(1, 16, 2, 32, 64),
                        concat_mask=torch.zeros(1, 1, 2, 32, 64), clip_vision_output=tiny_video.clip_vision_output())
    at_grid = (4, 8)  # exactly the trained long side: must stay stock
    plain = tiny_video.sample(model, "wan21_i2v", at_grid, cfg=2.0, positive=positive, negative=negative)
    patched = sega(dype(model, base_px))
    assert torch.equal(tiny_video.sample(patched, "wan21_i2v", at_grid, cfg=2.0, positive=positive,
                                         negative=negative), plain)
    with capture(patched, fam.embedder_attr) as (clone, calls):
        out = tiny_video.sample(clone, "wan21_i2v", GRID, cfg=2.0, positive=positive, negative=negative)
    assert torch.isfinite(out).all()
    base_grid = trained_grid(fam, base_px, GRID)
    for call in calls:
        ids, pe = call.tables[0]
        assert ids.shape[1] == 2 * GRID[0] * GRID[1]  # concat channels and clip tokens add no positions
        temps, grid, _ = sega_temperatures(fam, call.x, call.sigma, base_px)
        assert grid == GRID
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, base_grid, temps))


def test_wan22_5b_image_to_video_denoise_mask_keeps_the_live_sigma():
    """TI2V 5B puts the start image in frame 0 with a denoise mask (per-token timesteps inside the model); the
    schedule still follows the sampler's sigma and the generated grid."""
    import comfy.samplers

    fam = tiny_video.FAMILIES["wan22_5b"]
    model = tiny_video.build("wan22_5b")
    base_px = long_px(fam)
    start = tiny_video.latent("wan22_5b", 2, *GRID) + torch.randn(1, 48, 2, 16, 24,
                                                                   generator=torch.Generator().manual_seed(5))
    mask = torch.ones(1, 1, 2, 16, 24)
    mask[:, :, 0] = 0.0  # keep the first frame
    with capture(dype(model, base_px), fam.embedder_attr) as (patched, calls):
        out = tiny_video.sample(patched, "wan22_5b", GRID, latent_image=start, noise_mask=mask, steps=2)
    assert torch.allclose(out[:, :, 0], start[:, :, 0], atol=1e-5)  # kept (up to the latent format's scaling)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 2)
    assert [c.sigma[0].item() for c in calls] == pytest.approx(sigmas[:-1].tolist(), abs=0)
    for call in calls:
        ids, pe = call.tables[0]
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, trained_grid(fam, base_px, GRID)))


def test_hunyuan_video_reference_latent_never_inflates_the_scale():
    fam = tiny_video.FAMILIES["hunyuan_video"]
    model = tiny_video.build("hunyuan_video")
    base_px = long_px(fam)
    ref = torch.randn(1, 16, 1, 16, 24, generator=torch.Generator().manual_seed(4))  # I2V: one frame, prepended
    with capture(dype(model, base_px), fam.embedder_attr) as (patched, calls):
        tiny_video.sample(patched, "hunyuan_video", GRID, positive=fam.cond(7, 1, ref_latent=ref))
    for call in calls:
        ids, pe = call.tables[0]
        assert ids.shape[1] > 3 * GRID[0] * GRID[1]  # the reference frame's tokens are in the sequence ...
        assert ids[..., 2].max() >= 2 * GRID[1] - 1  # ... on columns shifted past the video's width
        # ... and the scale is the generated latent's grid
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, trained_grid(fam, base_px, GRID)))


# --- Wan 2.2 14B: two models, two samplers, one schedule ------------------------------------------------------


def test_wan22_high_low_noise_pair_hands_over_one_schedule():
    """KSamplerAdvanced x2 as in the Wan 2.2 14B templates: the high-noise model (its own DyPE node) runs steps 0-2
    with leftover noise, the low-noise model (its own node) steps 2-4 without adding noise. Each step's table comes
    from that step's live sigma, and the low-noise half equals what that model does in an unsplit run."""
    import comfy.samplers

    fam = tiny_video.FAMILIES["wan21"]
    high = dype(tiny_video.build("wan21", seed=1), long_px(fam))
    low = dype(tiny_video.build("wan21", seed=2), long_px(fam))
    steps, split = 4, 2
    with capture(high, fam.embedder_attr) as (high_run, high_calls):
        leftover = tiny_video.sample(high_run, "wan21", GRID, steps=steps, cfg=2.0, start_step=0, last_step=split)
    with capture(low, fam.embedder_attr) as (low_run, low_calls):
        tiny_video.sample(low_run, "wan21", GRID, steps=steps, cfg=2.0, latent_image=leftover,
                          noise=torch.zeros_like(leftover), start_step=split, last_step=steps, force_full_denoise=True)
    with capture(low, fam.embedder_attr) as (low_alone, alone_calls):
        tiny_video.sample(low_alone, "wan21", GRID, steps=steps, cfg=2.0)
    sigmas = comfy.samplers.calculate_sigmas(high.get_model_object("model_sampling"), "simple", steps)[:-1].tolist()
    handed = [c.sigma[0].item() for c in high_calls + low_calls]
    assert handed == pytest.approx(sigmas, abs=0) and len(high_calls) == len(low_calls) == split
    base_grid = trained_grid(fam, long_px(fam), GRID)
    for call in high_calls + low_calls:
        ids, pe = call.tables[0]
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, base_grid))
    for split_call, alone_call in zip(low_calls, alone_calls[split:], strict=True):
        assert torch.equal(split_call.sigma, alone_call.sigma)
        assert torch.equal(split_call.tables[0][1], alone_call.tables[0][1])


# --- newer hosts: Wan in-context streams (source_id) -------------------------------------------------------------


def test_wan_context_latent_streams_share_the_target_scale():
    import inspect

    import comfy.ldm.wan.model

    if "source_id" not in inspect.signature(comfy.ldm.wan.model.WanModel.rope_encode).parameters:
        pytest.skip("this host's Wan has no in-context context_latents (source_id): ComfyUI >= 0.2x")
    fam = tiny_video.FAMILIES["wan21"]
    model = tiny_video.build("wan21")
    base_px = long_px(fam)
    context = [torch.randn(1, 16, 1, 40, 40, generator=torch.Generator().manual_seed(6))]  # 20 x 20 tokens
    with capture(dype(model, base_px), fam.embedder_attr) as (patched, calls):
        out = tiny_video.sample(patched, "wan21", GRID, positive=fam.cond(7, 1, context_latents=context))
    assert torch.isfinite(out).all()
    base_grid = trained_grid(fam, base_px, GRID)
    for call in calls:
        assert len(call.tables) == 2  # the target, then the context stream (ComfyUI composes its source rotation)
        for ids, pe in call.tables:
            assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, base_grid))
        assert call.tables[1][0].shape[1] == 20 * 20


# --- schedule preview: the per-axis trained grid ------------------------------------------------------------------


@pytest.mark.parametrize(("family", "size", "base_px", "base_grid"), [
    ("wan21_1_3b", (1280, 720), 0, (30, 52)),  # the DyPE paper's video setting: s = 1.5 and 1.54
    ("wan_14b", (720, 1280), 0, (80, 45)),  # portrait: the portrait trained size, no extrapolation
    ("wan_14b", (1280, 720), 832, (30, 52)),  # the 480P checkpoint, by its long side
])
def test_schedule_preview_uses_the_oriented_trained_grid(family, size, base_px, base_grid):
    preview = _pack("nodes.schedule_preview")
    width, height = size
    curves = preview.schedule_curves(preview.PreviewRequest(family=family, width=width, height=height, steps=3,
                                                            base_px=base_px, sega=False))
    assert curves["base_grid"] == base_grid
    for name, axis in zip(("rows", "columns"), range(2), strict=True):
        assert curves["axes"][name]["scale"] == curves["grid"][axis] / base_grid[axis]
