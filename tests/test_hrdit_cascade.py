"""The whole HRDiT cascade on the real host with tiny models, against an independent reference of the official
pipeline: hrdit/pipeline.py at e4aa8c6 is HiFlow's loop (tests/hiflow_cascade_reference.py) whose stages sample the
official stage transformer with SPA on their leading steps and HAP on every step (tests/hrdit_stage_reference.py,
float64, nothing of the pack's). From a prompt and from an image, fixed seeds; mutations of the reference's settings
must move it past the tolerance (the comparison can fail); SPA and HAP on a DyPE / SEGA stage model; refusals."""

from __future__ import annotations

import dataclasses

import hiflow_cascade_reference as cref
import hiflow_models
import hrdit_stage_reference as sref
import pytest
import tiny_models
import torch
from patching import _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")
TEXT = 7  # tiny_models.flux_cond(7): the text tokens of every call
LATENT = (8, 8)  # 4 x 4 tokens: stages at 8 x 8 (one HAP block of 64) and 16 x 16 tokens (four blocks)
ALPHA = 64.0  # the tiny scope plan: band width 1 (each image block sees itself, the anchors and the text)
CASE = cref.Case(steps=6, scales=(2.0, 4.0), stage_steps=(4, 3), swin=False)
HRDIT = dict(ntk_factor=(4.0, 10.0), spa_steps=(2, 1), group_num=3, global_anchor=2)
TOLERANCE = 2e-5  # 5x the float32 noise measured against the float64 reference


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(TEXT, 1), \
        tiny_models.flux_cond(5, 2)


@pytest.fixture
def tiny_plan(monkeypatch):
    """The cascade's HAP plan: a uniform one whose band prunes at these sizes (the authors' alpha 2048 keeps every
    entry below 4096 tokens)."""
    scope = _pack("nodes.hap.scope_plan").ScopePlan(((ALPHA,) * 2,) * 2, ((0.0,) * 2,) * 2, "tests")
    monkeypatch.setattr(_pack("nodes.cascade.hrdit"), "official_plan", lambda: scope)


def _settings(case: cref.Case, spa=True, hap=True, **hrdit):
    values = {**HRDIT, **hrdit}
    return _pack("nodes.cascade").HrditSettings(
        steps=case.steps, denoise=case.denoise, cfg=case.cfg, scales=case.scales, stage_steps=case.stage_steps,
        stage_guidance=case.guidance, alphas=case.alphas, betas=case.betas, filter_ratio=case.ratios,
        sharpen=case.sharpen, swin=case.swin, spa=spa, hap=hap, **values)


def _reference(parts, case, latent, seed, spa=True, hap=True, **hrdit):
    model, vae, pos, neg = parts
    values = {**HRDIT, **hrdit}
    stages = [sref.reference_stage(model, TEXT, values["ntk_factor"][s], values["spa_steps"][s] if spa else 0,
                                   values["group_num"], ALPHA, values["global_anchor"], hap=hap)
              for s in range(len(case.scales))]
    want, outs, renoise_error = cref.reference_cascade(model, stages, pos, neg, vae, latent, seed, case)
    assert renoise_error < 1e-5
    return outs


def _ours(parts, case, latent, seed, stage_model=None, **settings):
    model, vae, pos, neg = parts
    result = _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": latent}, seed,
                                                _settings(case, **settings), stage_model=stage_model)
    return [stage["samples"] for stage in result.stages]


def _gap(a: list, b: list) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b, strict=True))


def _image_latent(parts):
    image = torch.rand(1, 64, 64, 3, generator=torch.Generator().manual_seed(5))
    return parts[1].encode(image)


@pytest.mark.parametrize("source", ["prompt", "image"])
def test_the_cascade_matches_the_official_pipeline_and_its_mutations_do_not(parts, tiny_plan, source):
    """SPA (7 variants at 8 x 8 tokens, 2 steps of stage 1, 1 of stage 2) and HAP on every stage step."""
    case = CASE if source == "prompt" else dataclasses.replace(CASE, denoise=0.7)
    latent = torch.zeros(1, 16, *LATENT) if source == "prompt" else _image_latent(parts)
    ours = _ours(parts, case, latent, 11)
    want = _reference(parts, case, latent, 11)
    for got, expected in zip(ours, want, strict=True):  # measured 4.3e-6 (float32 against float64)
        torch.testing.assert_close(got, expected, rtol=0, atol=TOLERANCE)
    # Positions move a random tiny model little (SPA one step shorter: 5.5e-5), HAP much (0.2): each mutant of the
    # official settings is more than twice the tolerance away, so the comparison above would catch it.
    mutations = {"SPA one step shorter": dict(spa_steps=(1, 1)), "no SPA": dict(spa=False),
                 "no HAP": dict(hap=False), "anchor off": dict(global_anchor=0)}
    for name, mutation in mutations.items():
        assert _gap(ours[1:], _reference(parts, case, latent, 11, **mutation)[1:]) > 2 * TOLERANCE, name


def test_spa_and_hap_off_is_hiflow_with_hrdits_defaults(parts):
    """With both off the HRDiT cascade is HiFlow's, bit for bit, at the same settings (its pipeline is HiFlow's)."""
    model, vae, pos, neg = parts
    cascade = _pack("nodes.cascade")
    latent = {"samples": torch.zeros(1, 16, *LATENT)}
    hrdit = _settings(CASE, spa=False, hap=False)
    fields = {f.name: getattr(hrdit, f.name) for f in dataclasses.fields(cascade.HiFlowSettings)}
    hiflow = cascade.HiFlowSettings(**fields)
    got = cascade.run_cascade(model, pos, neg, vae, latent, 4, hrdit).latent["samples"]
    assert torch.equal(got, cascade.run_cascade(model, pos, neg, vae, latent, 4, hiflow).latent["samples"])


@pytest.mark.parametrize("patch", ["dype", "sega", "dype+sega"])
def test_spa_and_hap_run_on_a_dype_or_sega_stage_model(parts, tiny_plan, patch):
    """The node's stage_model keeps SPA and HAP on it (the hook wraps it); they change its result (HAP by ~0.2)."""
    model = parts[0]
    sega = lambda m: _pack("nodes.rope_patch.clone").patch_model(  # noqa: E731
        m, lambda c: c.with_sega(_pack("spectral").SegaSettings(), 256))
    patched = {"dype": lambda m: dype(m), "sega": sega, "dype+sega": lambda m: sega(dype(m))}[patch](model)
    latent = torch.zeros(1, 16, *LATENT)
    plain = _ours(parts, CASE, latent, 2, stage_model=patched, spa=False, hap=False)
    both = _ours(parts, CASE, latent, 2, stage_model=patched)
    assert all(torch.isfinite(x).all() for x in both)
    assert torch.equal(both[0], plain[0])  # the base pass is the model's own
    assert _gap(both[1:], plain[1:]) > 1e-2


def test_the_stage_models_carry_hrdits_plan(parts):
    """What the hook gives each stage: the official NTK model, SPA only where spa_steps > 0, HAP on both."""
    model = parts[0]
    hrdit = _pack("nodes.cascade.hrdit")
    spa = _pack("nodes.rope_patch.spa")
    settings = _settings(CASE, spa_steps=(2, 0))
    assert hrdit.attention_plan(settings, 0).spa == spa.SpaSettings(3)
    assert hrdit.attention_plan(settings, 0).spa_steps == (0, 2)
    assert hrdit.attention_plan(settings, 1).spa is None and hrdit.attention_plan(settings, 1).kernel.anchor == 2
    assert hrdit.attention_plan(_settings(CASE, spa=False, hap=False), 0) is None
    assert hrdit.official_plan().uniform and hrdit.official_plan().alphas[0][0] == 2048.0
    context = _pack("nodes.cascade.method").StageContext(
        index=1, grid=(32, 32), model=model, adapter=_pack("nodes.families").detect_family(model.model), vae=None,
        previous=None, base_sigmas=None, predictions=None, seed=0, stage_model=None)
    stage = hrdit.hrdit_stage_models(settings)(context)
    options = stage.model_options["transformer_options"]
    assert options[spa.ATTENTION_KEY].kernel is not None and options[spa.ATTENTION_KEY].spa is None
    theta = model.get_model_object("diffusion_model.pe_embedder").theta
    assert stage.get_model_object("diffusion_model.pe_embedder").theta == theta * 10.0
    assert "transformer_options" not in model.model_options or spa.ATTENTION_KEY not in \
        model.model_options["transformer_options"]  # the input MODEL untouched


def test_spa_or_hap_on_another_family_is_refused_by_name(comfy_host):
    qwen = tiny_models.build_qwen()
    tiny_pack = pytest.importorskip("headless.tiny_pack")
    vae = tiny_pack.build_vae("qwen_image")
    latent = {"samples": torch.zeros(1, 16, 1, 8, 8)}
    cascade = _pack("nodes.cascade")
    with pytest.raises(_pack("nodes.families").UnsupportedModelError,
                       match=r"^HRDiT Cascade: SPA and HAP replace FLUX.1's attention.*Turn 'spa' and 'hap' off"):
        cascade.run_cascade(qwen, tiny_models.qwen_cond(7, 1), tiny_models.qwen_cond(5, 2), vae, latent, 0,
                            _settings(CASE, spa=False))
    out = cascade.run_cascade(qwen, tiny_models.qwen_cond(7, 1), tiny_models.qwen_cond(5, 2), vae, latent, 0,
                              _settings(CASE, spa=False, hap=False))
    assert torch.isfinite(out.latent["samples"]).all()


def test_a_host_without_an_attention_override_refuses_hap_by_name(parts, monkeypatch):
    import comfy.ldm.modules.attention as attention

    model, vae, pos, neg = parts
    monkeypatch.delattr(attention, "wrap_attn")
    with pytest.raises(_pack("nodes.families").UnsupportedModelError,
                       match=r"^HRDiT Cascade: SPA and HAP replace the model's attention, which needs ComfyUI's "
                             r"attention override \(transformer_options\['optimized_attention_override'\]"):
        _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 0,
                                           _settings(CASE, spa=False))
