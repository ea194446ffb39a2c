"""DyPE and SEGA on the video DiTs (Wan 2.1/2.2, HunyuanVideo) on the real host: tiny random-weight models from
ComfyUI's classes, real samplers on 5-D latents. Frames are never rescaled; rows and columns behave as in images."""

from __future__ import annotations

import pytest
import tiny_video
import torch
from capture import capture
from video_patching import (
    FAMILIES,
    GRID,
    LONG_TOKENS,
    _pack,
    adapter_of,
    dype,
    expected_table,
    long_px,
    pair_slices,
    sega,
    sega_temperatures,
    trained_grid,
)

pytestmark = pytest.mark.usefixtures("comfy_host")


# --- detection ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", list(tiny_video.FAMILIES))
def test_detected_as_its_family(family):
    fam = tiny_video.FAMILIES[family]
    model = tiny_video.build(family)
    adapter = _pack("nodes.families").detect_family(model.model)
    assert adapter.name == fam.adapter
    assert adapter.embedder_attr == fam.embedder_attr and adapter.spatial_axes == (1, 2)
    embedder = model.get_model_object(fam.embedder_attr)
    assert tuple(embedder.axes_dim) == fam.axes_dim == adapter.axes_dim and float(embedder.theta) == adapter.theta


@pytest.mark.parametrize(("dim", "heads", "adapter", "trained_px"), [
    (1536, 12, "wan21_1_3b", (480, 832)),  # Wan 2.1 T2V 1.3B
    (5120, 40, "wan_14b", (720, 1280)),  # Wan 2.1 14B / Wan 2.2 14B high- and low-noise
])
def test_wan_size_is_told_apart_by_the_model_width(dim, heads, adapter, trained_px):
    import comfy.supported_models

    config = comfy.supported_models.WAN21_T2V(dict(tiny_video.FAMILIES["wan21"].config, dim=dim, num_heads=heads))
    config.set_inference_dtype(torch.float32, None)
    base_model = config.get_model({}, device="meta")  # real class and widths, no weights
    found = _pack("nodes.families").detect_family(base_model)
    assert found.name == adapter
    rows, cols = trained_px
    assert found.base_grid(0.0, (30, 50)) == (rows / 16, cols / 16)
    assert found.base_grid(0.0, (50, 30)) == (cols / 16, rows / 16)  # portrait latents: the portrait trained size


def test_base_resolution_is_the_long_side_with_the_family_aspect():
    families = _pack("nodes.families")
    wan14, wan13, wan5, flux = (families.find_adapter(n) for n in ("wan_14b", "wan21_1_3b", "wan22_5b", "flux"))
    assert wan14.trained_size(0) == (720, 1280) and wan14.trained_size(832) == (480, 832)  # a listed trained size
    assert wan14.trained_size(1920) == (1080, 1920)  # any other long side keeps 16:9
    assert wan13.trained_size(0) == (480, 832) and wan13.trained_size(1664) == (960, 1664)
    assert wan5.base_grid(0, (22, 40)) == (22, 40)  # 1280x704 on the 32-px tokens of the 5B
    hy15 = families.find_adapter("hunyuan_video15")
    assert hy15.trained_size(0) == (720, 1280) and hy15.trained_size(848) == (480, 848)  # 720p default, 480p listed
    assert flux.base_grid(2048, (8, 4)) == flux.base_grid(2048) == (128, 128)  # square families: as before


def test_newer_wan_variants_and_kandinsky_are_refused_by_name():
    families = _pack("nodes.families")
    for name in ("WAN21_CausalAR", "WAN22_WanDancer", "HunyuanVideo15_SR_Distilled", "Kandinsky5"):
        assert name in families.NOT_SUPPORTED


# --- no-op at / below the trained grid ------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("tokens", "base"), [
    ((8, 8), 0.0),  # the family default (720p-class): far below
    ((4, 8), LONG_TOKENS),  # landscape: cols exactly at the trained long side, rows below the short side
    ((8, 4), LONG_TOKENS),  # portrait: compared with the portrait trained size, still no-op
])
def test_at_or_below_the_trained_grid_is_bit_identical(family, tokens, base):
    fam = tiny_video.FAMILIES[family]
    model = tiny_video.build(family)
    base_px = long_px(fam, base) if base else 0.0
    plain = tiny_video.sample(model, family, tokens, cfg=2.0, sampler="dpmpp_2m")
    patched = tiny_video.sample(sega(dype(model, base_px)), family, tokens, cfg=2.0, sampler="dpmpp_2m")
    assert torch.equal(plain, patched)


# --- above: time axis stock, spatial axes from the live sigma -------------------------------------------------


@pytest.mark.parametrize(("family", "schedule"), [(name, dict(method="yarn")) for name in FAMILIES]
                         + [("wan21", dict(method="ntk")), ("hunyuan_video", dict(method="yarn", dynamic=False))])
def test_time_axis_is_stock_and_space_follows_the_live_sigma(family, schedule):
    import comfy.samplers

    fam = tiny_video.FAMILIES[family]
    model = tiny_video.build(family)
    base_px = long_px(fam)
    negative = fam.cond(7, 2)  # as long as the positive: cond and uncond are batched into one call
    plain = tiny_video.sample(model, family, GRID, steps=3, cfg=2.0, negative=negative)
    with capture(dype(model, base_px, **schedule), fam.embedder_attr) as (patched, calls):
        out = tiny_video.sample(patched, family, GRID, steps=3, cfg=2.0, negative=negative)
    assert not torch.equal(out, plain)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 3)
    assert [c.sigma[0].item() for c in calls] == pytest.approx(sigmas[:-1].tolist(), abs=0)
    stock = model.get_model_object(fam.embedder_attr)
    time_pairs = pair_slices(fam)[0]
    base_grid = trained_grid(fam, base_px, GRID)
    assert all(b < n for b, n in zip(base_grid, GRID, strict=True))
    for call in calls:
        assert len(call.tables) == 1 and call.sigma.shape == (2,)  # cond + uncond batched
        ids, pe = call.tables[0]
        assert ids.shape[1] >= 2 * GRID[0] * GRID[1] and torch.equal(ids[..., 0].unique(), torch.tensor([0.0, 1.0]))
        reference = stock(ids)
        assert pe.dtype == torch.float32 and pe.shape[2:] == reference.shape[2:]
        assert torch.equal(pe[..., time_pairs, :, :], reference[..., time_pairs, :, :].expand_as(pe[..., time_pairs, :, :]))
        assert not torch.equal(pe[..., time_pairs.stop:, :, :], reference[..., time_pairs.stop:, :, :].expand_as(
            pe[..., time_pairs.stop:, :, :]))
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, GRID, base_grid, **schedule))


@pytest.mark.parametrize("family", ["wan21", "hunyuan_video"])
def test_input_model_is_untouched(family):
    fam = tiny_video.FAMILIES[family]
    model = tiny_video.build(family)
    original = model.get_model_object(fam.embedder_attr)
    before = tiny_video.sample(model, family, GRID)
    patched = sega(dype(model, long_px(fam)))
    assert patched.model is model.model and not model.object_patches and not model.get_all_wrappers("apply_model")
    tiny_video.sample(patched, family, GRID)
    assert torch.equal(tiny_video.sample(model, family, GRID), before)
    import comfy.model_management

    comfy.model_management.unload_all_models()
    assert model.get_model_object(fam.embedder_attr) is original and type(original).__name__ == "EmbedND"


# --- SEGA: one spectrum per sample over the whole clip ----------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_sega_temperatures_are_per_sample_over_the_clip(family):
    fam = tiny_video.FAMILIES[family]
    model = tiny_video.build(family)
    base_px = long_px(fam)
    with capture(sega(dype(model, base_px)), fam.embedder_attr) as (patched, calls):
        tiny_video.sample(patched, family, GRID, batch=2, steps=2)
    assert len(calls) == 2
    for call in calls:
        assert call.x.shape[0] == 2 and call.x.shape[2] == 2  # two samples of two frames
        temps, grid, base_grid = sega_temperatures(fam, call.x, call.sigma, base_px)
        ids, pe = call.tables[0]
        assert pe.shape[0] == 2 and not torch.equal(pe[0], pe[1])  # each sample its own spectrum
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, grid, base_grid, temps))
        # one clip-level spectrum: the frame order does not matter, each sample ignores the other
        swapped, _, _ = sega_temperatures(fam, call.x.flip(2), call.sigma, base_px)
        alone, _, _ = sega_temperatures(fam, call.x[1:], call.sigma[1:], base_px)
        for axis in range(2):
            assert torch.allclose(swapped[axis], temps[axis], rtol=1e-12, atol=0)
            assert torch.allclose(alone[axis][0], temps[axis][1], rtol=1e-12, atol=0)  # batched FFT rounding


@pytest.mark.parametrize("recipe", ["paper", "port", "refined"])
def test_one_frame_is_the_image_behaviour(recipe):
    """A 1-frame video latent gets exactly the schedule (positions, spectrum, temperatures) of its 2-D frame."""
    schedule, config_mod = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.config")
    spectral, rope = _pack("spectral"), _pack("rope")
    fam = tiny_video.FAMILIES["wan21"]
    model = sega(dype(tiny_video.build("wan21"), long_px(fam)), recipe=recipe)
    adapter, embedder = adapter_of(fam), model.get_model_object(fam.embedder_attr)
    config = config_mod.read_config(model.model_options["transformer_options"])
    assert config.positions == rope.PositionSchedule() and config.sega == spectral.SegaSettings(recipe=recipe)
    frame = torch.randn(2, 16, 16, 24, generator=torch.Generator().manual_seed(3))
    sigma = torch.tensor([0.7, 0.7])
    video = schedule.build_call_scope(config, adapter, embedder, frame[:, :, None], sigma, base_model=model.model)
    image = schedule.build_call_scope(config, adapter, embedder, frame, sigma, base_model=model.model)
    assert video is not None and len(video.axes) == len(image.axes) == 2
    for v, i in zip(video.axes, image.axes, strict=True):
        assert v.column == i.column and torch.equal(v.freqs, i.freqs) and torch.equal(v.temperature, i.temperature)
