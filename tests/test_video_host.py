"""DyPE and SEGA on the video DiTs (Wan 2.1/2.2, HunyuanVideo) on the real host: tiny random-weight models from
ComfyUI's classes, real samplers on 5-D latents. Frames are never rescaled; rows and columns behave as in images."""

from __future__ import annotations

import pytest
import tiny_video
import torch
from capture import capture

pytestmark = pytest.mark.usefixtures("comfy_host")

FAMILIES = ["wan21", "wan22_5b", "hunyuan_video", "hunyuan_video15"]  # Wan I2V: its own tests below (detection, conditioning)
LONG_TOKENS = 8  # the tests' trained long side: 8 tokens; the short side follows the family's aspect
GRID = (8, 12)  # rows x cols tokens above it on both axes (scales 8/short and 12/8)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def adapter_of(fam: tiny_video.TinyVideo):
    return _pack("nodes.families").find_adapter(fam.adapter)


def long_px(fam: tiny_video.TinyVideo, tokens: float = LONG_TOKENS) -> float:
    return tokens * fam.px_per_token


def dype(model, base_px: float, **schedule):
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda config: config.with_positions(sched, base_px))


def sega(model, base_px: float = 0.0, **settings):
    """SEGA Attention; the "refined" recipe (the latent spectrum, per sample) unless a test asks for another."""
    spectral = _pack("spectral")
    settings.setdefault("recipe", "refined")
    values = spectral.SegaSettings(**settings)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda config: config.with_sega(values, base_px))


def pair_slices(fam: tiny_video.TinyVideo) -> list[slice]:
    bounds = [0]
    for dim in fam.axes_dim:
        bounds.append(bounds[-1] + dim // 2)
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def expected_table(fam, ids, sigma, grid, base_grid, temperatures=(None, None), **schedule) -> torch.Tensor:
    """rope/'s table for these ids at this sigma: time keeps the model's RoPE, rows/cols get the schedule."""
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    parts = []
    for column, dim in enumerate(fam.axes_dim):
        plain = rope.plain_frequencies(dim, fam.theta)[None]
        if column == 0:
            parts.append(rope.rotation_table(ids[..., 0], plain))
            continue
        axis = column - 1
        scale = grid[axis] / base_grid[axis]
        freqs = rope.axis_frequencies(sched, dim, fam.theta, scale, base_grid[axis], sigma.to(torch.float64))
        temperature = temperatures[axis]
        if temperature is None and sched.method == "yarn" and scale > 1:
            temperature = torch.full((1, dim // 2), rope.yarn_attention_scale(scale), dtype=torch.float64)
        if scale <= 1:
            freqs, temperature = plain, None
        parts.append(rope.rotation_table(ids[..., column], freqs, temperature))
    batch = max(p.shape[0] for p in parts)
    return torch.cat([p.expand(batch, *p.shape[1:]) for p in parts], dim=-3).unsqueeze(1)


def trained_grid(fam, base_px: float, grid) -> tuple[float, float]:
    return adapter_of(fam).base_grid(base_px, grid)


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


def _sega_temperatures(fam, x, sigma, base_px):
    """The per-pair temperatures SEGA prescribes for this call's latent (per sample, power averaged over frames)."""
    rope, spectral = _pack("rope"), _pack("spectral")
    settings = spectral.SegaSettings(recipe="refined")
    adapter = adapter_of(fam)
    grid = adapter.token_grid(x)
    base_grid = adapter.base_grid(base_px, grid)
    spectrum = spectral.latent_spectrum(x, adapter.patch_size, settings)
    temps = []
    for axis, key in enumerate(("h", "w")):
        dim = fam.axes_dim[axis + 1]
        scale = grid[axis] / base_grid[axis]
        freqs = rope.axis_frequencies(rope.PositionSchedule(), dim, fam.theta, scale, base_grid[axis],
                                      sigma.to(torch.float64))
        band, energy = getattr(spectrum, f"band_{key}"), getattr(spectrum, f"axis_{key}")
        if hasattr(spectral, "axis_temperatures"):  # the m_ref rule lives in the settings (newer spectral/)
            temps.append(spectral.axis_temperatures(freqs, band, energy, spectrum.spread, scale, settings,
                                                    spectrum.valid))
        else:
            temps.append(spectral.pair_scales(freqs, band, energy, spectrum.spread,
                                              spectral.reference_temperature(scale, settings.kappa), settings,
                                              spectrum.valid))
    return tuple(temps), grid, base_grid


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
        temps, grid, base_grid = _sega_temperatures(fam, call.x, call.sigma, base_px)
        ids, pe = call.tables[0]
        assert pe.shape[0] == 2 and not torch.equal(pe[0], pe[1])  # each sample its own spectrum
        assert torch.equal(pe, expected_table(fam, ids, call.sigma, grid, base_grid, temps))
        # one clip-level spectrum: the frame order does not matter, each sample ignores the other
        swapped, _, _ = _sega_temperatures(fam, call.x.flip(2), call.sigma, base_px)
        alone, _, _ = _sega_temperatures(fam, call.x[1:], call.sigma[1:], base_px)
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
        temps, grid, _ = _sega_temperatures(fam, call.x, call.sigma, base_px)
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
