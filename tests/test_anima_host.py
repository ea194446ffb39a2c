"""Anima (a Cosmos-Predict2 2B DiT, newer hosts) on the real host: a tiny random-weight model from ComfyUI's own
classes, real samplers. Its RoPE module (Cosmos' ``VideoRopePosition3DEmb``) builds the table from the latent's
shape for the whole batch; the pack replaces it with ``CosmosRopeEmbedder`` (nodes/rope_patch/cosmos_embedder.py), which keeps the
time pairs as they are and schedules rows and columns like every other family's."""

from __future__ import annotations

import pytest
import tiny_models
import torch

pytestmark = pytest.mark.usefixtures("comfy_host")
FAMILY = "anima"
BASE_TOKENS = 4


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture
def fam() -> tiny_models.TinyFamily:
    why = tiny_models.missing_on_this_host(FAMILY)
    if why:
        pytest.skip(f"Anima is not on this host: {why}")
    return tiny_models.FAMILIES[FAMILY]


def dype(model, base_px: float = BASE_TOKENS * 16, **schedule):
    sched = _pack("rope").PositionSchedule(**schedule)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_positions(sched, base_px))


def sega(model, base_px: float = BASE_TOKENS * 16, recipe: str = "paper"):
    values = _pack("spectral").SegaSettings(recipe=recipe)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_sega(values, base_px))


def _record(model, fam):
    """(sigma, latent shape, table) per call of the patched module, and the hook's handle."""
    calls = []
    embedder = model.get_model_object(fam.embedder_attr)

    def hook(module, args, output):
        calls.append((args[0].shape, output.detach().clone()))

    return calls, embedder.register_forward_hook(hook)


def expected_table(stock_table, shape, sigma, grid, base_tokens, fam, **schedule):
    """The original's time pairs, then rows and columns as rope/ prescribes on the integer grid (theta: the live
    module's 10000 x NTK factor), with YaRN's temperature on a scaled axis."""
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    _, frames, rows, cols, _ = shape
    grid_ids = torch.stack(torch.meshgrid(torch.arange(frames), torch.arange(rows), torch.arange(cols), indexing="ij"),
                           dim=-1).reshape(-1, 3).to(torch.float32)
    parts = [stock_table[:, : fam.axes_dim[0] // 2]]
    for axis, column in enumerate((1, 2)):
        dim = fam.axes_dim[column]
        scale = grid[axis] / base_tokens
        if scale <= 1:
            freqs, temperature = rope.plain_frequencies(dim, fam.theta)[None], None
        else:
            freqs = rope.axis_frequencies(sched, dim, fam.theta, scale, base_tokens,
                                          sigma.reshape(-1)[:1].to(torch.float64))
            temperature = None if sched.method != "yarn" else torch.full(
                (1, dim // 2), rope.yarn_temperature(scale), dtype=torch.float64)
        parts.append(rope.rotation_table(grid_ids[None, :, column], freqs, temperature)[0])
    return torch.cat(parts, dim=1)


def test_detected_and_patched_with_the_cosmos_replacement(fam):
    model = fam.build(0)
    adapter = _pack("nodes.families").detect_family(model.model)
    assert adapter.name == "anima"
    original = model.get_model_object(fam.embedder_attr)
    patched = dype(model).get_model_object(fam.embedder_attr)
    assert type(patched).__name__ == "CosmosRopeEmbedder" and patched.original is original
    assert patched.axes_dim == list(fam.axes_dim) and patched.theta == pytest.approx(fam.theta)
    assert model.get_model_object(fam.embedder_attr) is original  # the input MODEL is untouched


@pytest.mark.parametrize("cfg", [1.0, 2.0])
def test_at_or_below_the_trained_size_is_bit_identical(fam, cfg):
    model = fam.build(0)
    plain = tiny_models.sample(model, FAMILY, tokens=(8, 8), steps=2, cfg=cfg)
    for base_tokens in (0, 8):  # the family default (1024 px) and exactly the 8-token grid
        patched = sega(dype(model, base_tokens * 16), base_tokens * 16)
        assert torch.equal(tiny_models.sample(patched, FAMILY, tokens=(8, 8), steps=2, cfg=cfg), plain)


@pytest.mark.parametrize("schedule", [dict(method="yarn"), dict(method="ntk")])
def test_above_the_trained_size_each_step_gets_its_live_sigma(fam, schedule):
    import comfy.samplers

    model = fam.build(0)
    grid = (8, 12)  # scales 2 and 3
    plain = tiny_models.sample(model, FAMILY, tokens=grid, steps=3, cfg=2.0)
    patched = dype(model, **schedule)
    calls, handle = _record(patched, fam)
    try:
        out = tiny_models.sample(patched, FAMILY, tokens=grid, steps=3, cfg=2.0)
    finally:
        handle.remove()
    assert not torch.equal(out, plain) and torch.isfinite(out).all()
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 3)[:-1]
    stock = model.get_model_object(fam.embedder_attr)
    assert len(calls) == 6  # cond and uncond (5 and 7 text tokens: two calls a step), one table each
    for (shape, table), sigma in zip(calls, sigmas.repeat_interleave(2), strict=True):
        stock_table = stock(torch.zeros(shape), fps=None)
        assert table.shape == stock_table.shape and table.dtype == torch.float32
        time_pairs = fam.axes_dim[0] // 2
        assert torch.equal(table[:, :time_pairs], stock_table[:, :time_pairs])  # time: never rescaled
        expected = expected_table(stock_table, shape, sigma, grid, BASE_TOKENS, fam, **schedule)
        assert torch.allclose(table, expected, rtol=0, atol=1e-6)


def test_sega_runs_one_image_and_refuses_a_batch_of_different_images(fam):
    model = sega(dype(fam.build(0)))
    out = tiny_models.sample(model, FAMILY, tokens=(8, 12), steps=2, cfg=2.0)
    assert torch.isfinite(out).all()
    dype_only = tiny_models.sample(dype(fam.build(0)), FAMILY, tokens=(8, 12), steps=2, batch=2)
    assert torch.isfinite(dype_only).all()  # DyPE alone: one sigma for the batch, one table
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match="batch size 1"):
        tiny_models.sample(model, FAMILY, tokens=(8, 12), steps=2, batch=2)
    # SEGA alone with its default recipe: static positions and the batch's one spectrum, so one set of
    # temperatures for every image: a batch is fine; a per-sample recipe is refused
    alone = tiny_models.sample(sega(fam.build(0)), FAMILY, tokens=(8, 12), steps=2, batch=2)
    assert torch.isfinite(alone).all()
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match="batch size 1"):
        tiny_models.sample(sega(fam.build(0), recipe="refined"), FAMILY, tokens=(8, 12), steps=2, batch=2)


def test_a_replaced_cosmos_module_is_refused(fam):
    model = fam.build(0)
    model.add_object_patch(fam.embedder_attr, torch.nn.Identity())
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match="VideoRopePosition3DEmb"):
        dype(model)


def test_cosmos_predict2_is_refused_with_its_reason(fam):
    import comfy.model_base

    families = _pack("nodes.families")
    instance = comfy.model_base.CosmosPredict2.__new__(comfy.model_base.CosmosPredict2)
    torch.nn.Module.__init__(instance)
    with pytest.raises(families.UnsupportedModelError, match="EDM-style sigmas"):
        families.detect_family(instance)


def test_detected_from_a_checkpoints_keys(fam):
    """State-dict keys → comfy.model_detection → Anima, with the RoPE settings detection gives every 16-channel
    Cosmos/Anima checkpoint (rope3d, ratio 4 on rows and columns): the tiny model's own."""
    import comfy.model_detection

    class_name, tiny_config = tiny_models.host_config(FAMILY)
    state_dict = fam.build(0).model.diffusion_model.state_dict()
    detected = comfy.model_detection.model_config_from_unet(dict(state_dict), "")
    assert detected is not None and type(detected).__name__ == class_name
    for key in ("pos_emb_cls", "rope_h_extrapolation_ratio", "rope_w_extrapolation_ratio",
                "rope_t_extrapolation_ratio", "rope_enable_fps_modulation", "patch_spatial"):
        assert detected.unet_config[key] == tiny_config[key], key
    detected.unet_config.update({k: v for k, v in tiny_config.items() if detected.unet_config.get(k) != v})
    detected.set_inference_dtype(torch.float32, None)
    base_model = detected.get_model(state_dict)
    base_model.diffusion_model.load_state_dict(state_dict, strict=True)
    assert _pack("nodes.families").detect_family(base_model).name == "anima"
