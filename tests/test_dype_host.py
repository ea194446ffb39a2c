"""DyPE on the real host: tiny random-weight Flux.1 and Qwen-Image from ComfyUI's classes, real samplers."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from capture import capture

pytestmark = pytest.mark.usefixtures("comfy_host")

FAMILIES = ["flux", "qwen_image"]
BASE_PX = 64  # 4 tokens per axis: tiny latents of 8+ tokens are then "above the trained resolution"


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def dype(model, base_px: int = BASE_PX, **schedule):
    rope = _pack("rope")
    patch = _pack("nodes.patch")
    sched = rope.PositionSchedule(**schedule)
    return patch.patch_model(model, lambda config: config.with_positions(sched, base_px))


def expected_table(ids: torch.Tensor, sigma: torch.Tensor, grid: tuple[int, int], base_tokens: float, **schedule):
    """The pe EmbedND-layout table rope/ prescribes for these ids at this sigma (axis 0 and text never scaled)."""
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    parts = [rope.rotation_table(ids[..., 0], rope.plain_frequencies(16, 10000.0)[None])]
    for column, n in zip((1, 2), grid, strict=True):
        scale = n / base_tokens
        freqs = rope.axis_frequencies(sched, 56, 10000.0, scale, base_tokens, sigma.to(torch.float64))
        temperature = None
        if sched.method == "yarn" and scale > 1:
            temperature = torch.full((1, 28), rope.yarn_attention_scale(scale), dtype=torch.float64)
        if scale <= 1:
            freqs = rope.plain_frequencies(56, 10000.0)[None]
        parts.append(rope.rotation_table(ids[..., column], freqs, temperature))
    batch = max(p.shape[0] for p in parts)
    return torch.cat([p.expand(batch, *p.shape[1:]) for p in parts], dim=-3).unsqueeze(1)


def _sample(model, family, hw, **kw):
    return tiny_models.sample(model, family, hw, **kw)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("sampler", "cfg", "neg_tokens"), [("euler", 1.0, 5), ("dpmpp_2m", 2.5, 7), ("heun", 2.0, 5)])
@pytest.mark.parametrize("base_px", [0, 128])  # 0 = family default (1024 / 1328); 128 px = exactly the 8-token grid
def test_at_or_below_base_is_bit_identical(family, sampler, cfg, neg_tokens, base_px):
    fam = tiny_models.FAMILIES[family]
    model = fam.build(0)
    neg = fam.cond(neg_tokens, 2)
    plain = _sample(model, family, (16, 16), steps=2, cfg=cfg, sampler=sampler, negative=neg)
    patched = _sample(dype(model, base_px=base_px), family, (16, 16), steps=2, cfg=cfg, sampler=sampler, negative=neg)
    assert torch.equal(plain, patched)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("schedule", [dict(method="yarn"), dict(method="ntk"), dict(method="pi", lambda_s=1.0),
                                      dict(method="yarn", dynamic=False), dict(method="yarn", threshold_rule="power")])
def test_above_base_builds_each_step_from_the_live_sigma(family, schedule):
    import comfy.samplers

    fam = tiny_models.FAMILIES[family]
    model = fam.build(0)
    hw = (16, 24)  # 8 x 12 tokens: two different per-axis scales (2 and 3)
    plain = _sample(model, family, hw, steps=3, cfg=2.0, negative=fam.cond(7, 2))
    with capture(dype(model, **schedule)) as (patched, calls):
        out = _sample(patched, family, hw, steps=3, cfg=2.0, negative=fam.cond(7, 2))
    assert not torch.equal(out, plain)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 3)
    assert [c.sigma[0].item() for c in calls] == pytest.approx(sigmas[:-1].tolist(), abs=0)
    for call in calls:
        assert len(call.tables) == 1 and call.sigma.shape == (2,)  # cond + uncond batched
        ids, pe = call.tables[0]
        assert pe.dtype == torch.float32 and pe.shape[:3] == (2, 1, ids.shape[1])
        assert torch.equal(pe, expected_table(ids, call.sigma, (8, 12), BASE_PX / 16, **schedule))


@pytest.mark.parametrize("family", FAMILIES)
def test_input_model_is_untouched(family):
    fam = tiny_models.FAMILIES[family]
    model = fam.build(0)
    original_embedder = model.model.diffusion_model.pe_embedder
    before = _sample(model, family, (16, 16), steps=2)
    patched = dype(model)
    assert patched.model is model.model and not model.object_patches and not model.get_all_wrappers("apply_model")
    _sample(patched, family, (16, 16), steps=2)
    assert torch.equal(_sample(model, family, (16, 16), steps=2), before)
    import comfy.model_management

    comfy.model_management.unload_all_models()
    assert model.model.diffusion_model.pe_embedder is original_embedder
    assert type(original_embedder).__name__ == "EmbedND"


@pytest.mark.parametrize("family", FAMILIES)
def test_two_clones_sampled_alternately_match_each_alone(family):
    fam = tiny_models.FAMILIES[family]
    model = fam.build(0)
    a_model = dype(model, method="yarn")
    b_model = dype(model, base_px=96, method="ntk")
    b_alone = _sample(b_model, family, (16, 24), steps=2, cfg=2.0)
    a1 = _sample(a_model, family, (16, 24), steps=2, cfg=2.0)
    b1 = _sample(b_model, family, (16, 24), steps=2, cfg=2.0)
    a2 = _sample(a_model, family, (16, 24), steps=2, cfg=2.0)
    assert torch.equal(a1, a2) and torch.equal(b1, b_alone)
    assert not torch.equal(a1, b1)


@pytest.mark.parametrize("family", FAMILIES)
def test_cfg_batched_and_split_conds_see_the_same_t(family):
    fam = tiny_models.FAMILIES[family]
    model = dype(fam.build(0))
    runs = {}
    for mode, neg_tokens in (("batched", 7), ("split", 5)):  # 7 vs 5 text tokens cannot be concatenated
        with capture(model) as (patched, calls):
            _sample(patched, family, (16, 24), steps=3, cfg=2.0, negative=fam.cond(neg_tokens, 2))
        runs[mode] = calls
    assert len(runs["batched"]) == 3 and len(runs["split"]) == 6
    batched = [c.sigma[0].item() for c in runs["batched"]]
    split = [c.sigma[0].item() for c in runs["split"]]
    assert split[0::2] == batched and split[1::2] == batched
    for call in runs["batched"] + runs["split"]:
        ids, pe = call.tables[0]
        assert torch.equal(pe, expected_table(ids, call.sigma, (8, 12), BASE_PX / 16, method="yarn"))


@pytest.mark.parametrize(("family", "refs"), [
    ("flux", [torch.randn(1, 16, 40, 40), torch.randn(1, 16, 8, 8)]),
    ("qwen_image", [torch.randn(1, 16, 1, 40, 40)]),
])
def test_reference_latents_never_inflate_the_scale(family, refs):
    fam = tiny_models.FAMILIES[family]
    model = dype(fam.build(0))
    positive = fam.cond(7, 1, reference_latents=refs)
    with capture(model) as (patched, calls):
        _sample(patched, family, (16, 16), steps=2, positive=positive)
    for call in calls:
        ids, pe = call.tables[0]
        grid_tokens = 8 * 8
        assert ids.shape[1] > 7 + grid_tokens  # the references are in the sequence...
        # ...but the scale is the generated latent's (8 x 8 tokens), not the references' (20 x 20)
        assert torch.equal(pe, expected_table(ids, call.sigma, (8, 8), BASE_PX / 16, method="yarn"))


@pytest.mark.parametrize("family", FAMILIES)
def test_sizes_that_are_not_multiples_of_16_work(family):
    fam = tiny_models.FAMILIES[family]
    with capture(dype(fam.build(0))) as (patched, calls):
        out = _sample(patched, family, (15, 21), steps=2)
    assert torch.isfinite(out).all() and out.shape[-2:] == (15, 21)
    ids, pe = calls[0].tables[0]
    assert torch.equal(pe, expected_table(ids, calls[0].sigma, (8, 11), BASE_PX / 16, method="yarn"))


def test_unsupported_models_get_a_clear_error():
    import comfy.model_patcher
    import comfy.supported_models

    families = _pack("nodes.families")
    config = comfy.supported_models.AuraFlow(dict(max_seq=64, cond_seq_dim=32, n_double_layers=1, n_layers=1, dim=64,
                                                  n_heads=1, patch_size=2, in_channels=4, out_channels=4))
    config.set_inference_dtype(torch.float32, None)
    aura = comfy.model_patcher.ModelPatcher(config.get_model({}), torch.device("cpu"), torch.device("cpu"))
    with pytest.raises(families.UnsupportedModelError, match=r"AuraFlow.*Supported families: Flux\.1.*Qwen-Image"):
        dype(aura)
    with pytest.raises(TypeError, match="Expected a ComfyUI MODEL"):
        dype("not a model")
