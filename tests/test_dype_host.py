"""DyPE on the real host: tiny random-weight Flux.1 and Qwen-Image from ComfyUI's classes, real samplers."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from capture import capture
from patching import (
    ALL_FAMILIES,
    BASE_TOKENS,
    FAMILIES,
    _pack,
    as_heads_first,
    base_px,
    check_tables,
    dype,
    host_family,
    pair_slices,
)

pytestmark = pytest.mark.usefixtures("comfy_host")


def _sample(model, family, hw=None, **kw):
    return tiny_models.sample(model, family, hw, **kw)


SAMPLER_CASES = [("euler", 1.0, 5), ("dpmpp_2m", 2.5, 7), ("heun", 2.0, 5)]


def _noop_cases():
    for name in ALL_FAMILIES:
        for case in SAMPLER_CASES if name in FAMILIES else SAMPLER_CASES[1:2]:
            yield name, *case


@pytest.mark.parametrize(("family", "sampler", "cfg", "neg_tokens"), list(_noop_cases()))
@pytest.mark.parametrize("base_tokens", [0, 8])  # 0 = family default (1024 px etc.); 8 = exactly the 8-token grid
def test_at_or_below_base_is_bit_identical(family, sampler, cfg, neg_tokens, base_tokens):
    fam = host_family(family)
    model = fam.build(0)
    neg = fam.cond(neg_tokens, 2)
    plain = _sample(model, family, tokens=(8, 8), steps=2, cfg=cfg, sampler=sampler, negative=neg)
    patched = _sample(dype(model, base_px=base_px(family, base_tokens)), family, tokens=(8, 8), steps=2, cfg=cfg,
                      sampler=sampler, negative=neg)
    assert torch.equal(plain, patched)


SCHEDULES = [dict(method="yarn"), dict(method="ntk"), dict(method="pi", lambda_s=1.0),
             dict(method="yarn", dynamic=False), dict(method="yarn", threshold_rule="power")]


def _schedule_cases():
    for name in ALL_FAMILIES:
        for schedule in SCHEDULES if name in FAMILIES else SCHEDULES[:2]:
            yield name, schedule


@pytest.mark.parametrize(("family", "schedule"), list(_schedule_cases()))
def test_above_base_builds_each_step_from_the_live_sigma(family, schedule):
    import comfy.samplers

    fam = host_family(family)
    model = fam.build(0)
    grid = (8, 12)  # two different per-axis scales (2 and 3)
    plain = _sample(model, family, tokens=grid, steps=3, cfg=2.0, negative=fam.cond(7, 2))
    with capture(dype(model, base_px(family), **schedule), fam.embedder_attr) as (patched, calls):
        out = _sample(patched, family, tokens=grid, steps=3, cfg=2.0, negative=fam.cond(7, 2))
    assert not torch.equal(out, plain)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 3)
    assert [c.sigma[0].item() for c in calls] == pytest.approx(sigmas[:-1].tolist(), abs=0)
    assert all(c.sigma.shape == (2,) for c in calls)  # cond + uncond batched
    check_tables(fam, calls, grid, BASE_TOKENS, **schedule)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_input_model_is_untouched(family):
    import comfy.utils

    fam = host_family(family)
    model = fam.build(0)
    original_embedder = comfy.utils.get_attr(model.model, fam.embedder_attr)
    before = _sample(model, family, tokens=(8, 8), steps=2)
    patched = dype(model)
    assert patched.model is model.model and not model.object_patches and not model.get_all_wrappers("apply_model")
    _sample(patched, family, tokens=(8, 8), steps=2)
    assert torch.equal(_sample(model, family, tokens=(8, 8), steps=2), before)
    import comfy.model_management

    comfy.model_management.unload_all_models()
    assert comfy.utils.get_attr(model.model, fam.embedder_attr) is original_embedder
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
    check_tables(fam, runs["batched"] + runs["split"], (8, 12), BASE_TOKENS, method="yarn")


@pytest.mark.parametrize(("family", "refs"), [
    ("flux", [torch.randn(1, 16, 40, 40), torch.randn(1, 16, 8, 8)]),
    ("qwen_image", [torch.randn(1, 16, 1, 40, 40)]),
    ("flux2", [torch.randn(1, 128, 20, 20)]),  # refs up the index axis (10, 20, ...)
    ("omnigen2", [torch.randn(1, 16, 40, 40)]),  # refs on their own index after the caption
])
def test_reference_latents_never_inflate_the_scale(family, refs):
    fam = tiny_models.FAMILIES[family]
    model = dype(fam.build(0))
    positive = fam.cond(7, 1, reference_latents=refs)
    with capture(model, fam.embedder_attr) as (patched, calls):
        _sample(patched, family, tokens=(8, 8), steps=2, positive=positive)
    for call in calls:
        ids, pe = call.tables[0]
        assert ids.shape[1] > 7 + 8 * 8  # the references are in the sequence...
        # ...but the scale is the generated latent's (8 x 8 tokens), not the references' (20 x 20)
        check_tables(fam, [call], (8, 8), BASE_TOKENS, method="yarn")


@pytest.mark.parametrize(("family", "hw", "grid"), [
    ("flux", (15, 21), (8, 11)), ("qwen_image", (15, 21), (8, 11)),
    ("chroma_radiance", (121, 181), (8, 12)),  # pixels, padded up to 16-px patches: ceil, not round
])
def test_sizes_that_are_not_multiples_of_the_patch_work(family, hw, grid):
    fam = tiny_models.FAMILIES[family]
    with capture(dype(fam.build(0)), fam.embedder_attr) as (patched, calls):
        out = _sample(patched, family, hw, steps=2)
    assert torch.isfinite(out).all() and out.shape[-2:] == hw
    ids, _ = calls[0].tables[0]
    image_cols = ids[0, -grid[0] * grid[1]:, fam.spatial[1]]  # image tokens come last in these three families
    assert image_cols.max().item() - image_cols.min().item() == grid[1] - 1  # the model's own grid...
    check_tables(fam, calls[:1], grid, BASE_TOKENS, method="yarn")  # ...is the one the scale comes from


@pytest.mark.parametrize("family", [name for name in ALL_FAMILIES if tiny_models.FAMILIES[name].text_on_spatial])
def test_text_on_spatial_columns_keeps_its_phase_relative_to_the_image(family):
    """The one text rule: text positions on a spatial column get that column's schedule, like the image tokens.

    Stock, q·k between a text token at p and an image token at q rotates by (p - q)·ω. Patched, both tokens use
    the scaled ω', so the rotation is (p - q)·ω': the text↔image geometry is the image↔image one, rescaled."""
    fam = host_family(family)
    with capture(dype(fam.build(0), method="pi", lambda_s=1.0, dynamic=False), fam.embedder_attr) as (clone, calls):
        _sample(clone, family, tokens=(8, 12), steps=1)
    ids, pe = calls[0].tables[0]
    pe = as_heads_first(fam, pe)[0, 0]
    column = fam.spatial[1]
    positions = ids[0, :, column].double()
    cols = pair_slices(fam)[column]
    order = torch.arange(ids.shape[1])
    is_text = order >= ids.shape[1] - 7 if fam.text_last else order < 7  # 7 prompt tokens, cfg 1
    text_rows = torch.nonzero(is_text & (positions != 0)).flatten()
    assert text_rows.numel() > 0, "the family puts no text on the spatial columns"
    # static PI at scale 3 on columns: ω' = ω / 3 on every pair, for text and image tokens alike
    omega = _pack("rope").plain_frequencies(fam.axes_dim[column], fam.theta) / 3
    angle = torch.atan2(pe[:, cols, 1, 0].double(), pe[:, cols, 0, 0].double())
    want = torch.remainder(positions[:, None] * omega[None] + torch.pi, 2 * torch.pi) - torch.pi
    torch.testing.assert_close(angle[text_rows], want[text_rows], rtol=0, atol=2e-6)


def test_unsupported_models_get_a_clear_error():
    import comfy.model_patcher
    import comfy.supported_models

    families = _pack("nodes.families")
    config = comfy.supported_models.AuraFlow(dict(max_seq=64, cond_seq_dim=32, n_double_layers=1, n_layers=1, dim=64,
                                                  n_heads=1, patch_size=2, in_channels=4, out_channels=4))
    config.set_inference_dtype(torch.float32, None)
    aura = comfy.model_patcher.ModelPatcher(config.get_model({}), torch.device("cpu"), torch.device("cpu"))
    with pytest.raises(families.UnsupportedModelError,
                       match=r"AuraFlow.*Supported families: Flux\.1.*Chroma.*Qwen-Image.*HiDream.*OmniGen2"):
        dype(aura)
    with pytest.raises(TypeError, match="Expected a ComfyUI MODEL"):
        dype("not a model")


#: Families whose checkpoint keys ComfyUI's detection cannot tell apart at tiny width, and why.
_DETECTION_NEEDS_FULL_WIDTH = {
    "z_image": "model_detection recognises Z-Image by its width (dim 3840) only",
    "z_image_pixel": "model_detection recognises Z-Image (pixel space too) by its width (dim 3840) only",
    "kandinsky5_image": "model_detection recognises Kandinsky 5 Image by its width (model_dim 2560) only; it then "
    "sets rope_scale_factor (1, 1, 1), which the adapter requires",
}


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_detected_from_a_checkpoints_keys(family):
    """State-dict keys → comfy.model_detection → supported_models class → BaseModel → the pack's adapter.

    Detection reads the tiny widths from the tensors but assumes production values for what it cannot read
    (head counts, MLP ratios, Chroma's approximator size; Lumina 2's whole head layout below width 2304): those are
    set back to the tiny ones, and the weights must then load strictly, so the model is the one the keys describe.
    The RoPE layout itself (axes, theta, text id columns, patch) must come from detection or the model's defaults."""
    import comfy.model_detection
    import comfy.model_patcher

    if family in _DETECTION_NEEDS_FULL_WIDTH:
        pytest.skip(_DETECTION_NEEDS_FULL_WIDTH[family])
    fam = host_family(family)
    class_name, tiny_config = tiny_models.host_config(family)
    state_dict = fam.build(0).model.diffusion_model.state_dict()
    detected = comfy.model_detection.model_config_from_unet(dict(state_dict), "")
    assert detected is not None and type(detected).__name__ == class_name
    assumed = {k: v for k, v in tiny_config.items() if detected.unet_config.get(k) != v}
    rope_keys = {"axes_dim", "axes_dims", "axes_dims_rope", "axes_dim_rope", "theta", "rope_theta", "txt_ids_dims",
                 "patch_size"}
    wrong = {k for k in rope_keys & set(assumed) if k in detected.unet_config}  # absent = the model's own default
    assert not wrong, f"detection got the RoPE layout wrong: { {k: detected.unet_config[k] for k in wrong} }"
    detected.unet_config.update(assumed)
    detected.set_inference_dtype(torch.float32, None)
    base_model = detected.get_model(state_dict)
    base_model.diffusion_model.load_state_dict(state_dict, strict=True)
    loaded = comfy.model_patcher.ModelPatcher(base_model, torch.device("cpu"), torch.device("cpu"))
    assert _pack("nodes.families").detect_family(base_model).name == family
    assert type(dype(loaded).get_model_object(fam.embedder_attr)).__name__ == "ExtrapolatingRopeEmbedder"
