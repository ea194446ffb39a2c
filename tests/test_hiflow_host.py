"""The HiFlow cascade on the real host with tiny models: against the reference loop of the official code
(tests/hiflow_cascade_reference.py), from a prompt and from an image, with DyPE and SEGA in the stages, errors."""

from __future__ import annotations

import math

import hiflow_cascade_reference as cref
import hiflow_models
import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens: stages at 8 x 8 and 16 x 16 latent pixels


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _schedule(name: str) -> str:
    inputs = _pack("nodes.inputs.cascade")
    return {"official": inputs.OFFICIAL_SHIFT, "model": inputs.MODEL_SHIFT, "static3": inputs.STATIC_SHIFT_3}[name]


def _settings(case: cref.Case, **extra):
    return _pack("nodes.cascade").HiFlowSettings(schedule=_schedule(case.schedule),
        steps=case.steps, denoise=case.denoise, cfg=case.cfg, scales=case.scales, stage_steps=case.stage_steps,
        stage_guidance=case.guidance, alphas=case.alphas, betas=case.betas, filter_ratio=case.ratios,
        sharpen=case.sharpen, swin=case.swin, **extra)


def _official_stages(model, case: cref.Case, factor: float = 10.0):
    stage_model = _pack("nodes.cascade.hiflow_model")
    adapter = _pack("nodes.cascade.families").cascade_family(model, "HiFlow Cascade")
    return [stage_model.official_stage_model(model, adapter, factor, True) for _ in case.scales]


def _compare(parts, case, latent, seed=3, stage_model=None):
    model, vae, pos, neg = parts
    hiflow = _pack("nodes.cascade")
    settings = _settings(case, ntk_factor=(10.0,) * len(case.scales))
    ours = hiflow.run_cascade(model, pos, neg, vae, {"samples": latent}, seed, settings, stage_model=stage_model)
    stages = [stage_model] * len(case.scales) if stage_model is not None else _official_stages(model, case)
    want, outs, renoise_error = cref.reference_cascade(model, stages, pos, neg, vae, latent, seed, case)
    assert renoise_error < 1e-5  # ComfyUI's re-noise at the stage's first sigma is σ·noise + (1 - σ)·x0
    for got, expected in zip(ours.stages, outs, strict=True):
        assert got["samples"].shape == expected.shape
        torch.testing.assert_close(got["samples"], expected, rtol=1e-4, atol=1e-4)
    return ours


def test_base_schedule_is_the_official_grid_through_the_models_shift(parts):
    """At 1024² (64 x 64 FLUX tokens) the official dynamic shift is mu = 1.15, ComfyUI FLUX.1's own; elsewhere the
    official mu follows the base size and the other choices are their own rules."""
    import hiflow_reference as ref

    schedule = _pack("nodes.cascade.schedule")
    adapter = _pack("nodes.cascade.families").cascade_family(parts[0], "HiFlow Cascade")
    model = parts[0]
    trained = torch.zeros(1, 16, 128, 128)
    for name, latent in [("official", trained), ("official", torch.zeros(1, 16, 96, 64)), ("model", trained),
                         ("static3", trained)]:
        got = schedule.base_schedule(model, adapter, 30, latent, _schedule(name))
        want = ref.official_sigmas(30, cref.schedule_fn(model, latent, name))
        torch.testing.assert_close(got.double(), want, rtol=0, atol=1e-6)
        assert got[0] == 1.0 and got[-1] == 0.0
    official = schedule.base_schedule(model, adapter, 30, trained, _schedule("official"))
    torch.testing.assert_close(official, schedule.base_schedule(model, adapter, 30, trained, _schedule("model")),
                               rtol=0, atol=1e-6)  # 1024²: the official schedule is the model's own
    static = schedule.base_schedule(model, adapter, 30, trained, _schedule("static3"))
    assert 0.012 < float((official - static).abs().max()) < 0.014  # the 0.013 of a static shift 3
    small = schedule.base_schedule(model, adapter, 30, torch.zeros(1, 16, 96, 64), _schedule("official"))
    assert float((small - official).abs().max()) > 0.01  # the official mu follows the base size
    with pytest.raises(ValueError, match="'schedule' must be one of"):
        schedule.base_schedule(model, adapter, 30, trained, "shift 3")


@pytest.mark.parametrize("case", [
    cref.Case(),  # odd last stage: ends padded, cropped back
    cref.Case(stage_steps=(4, 2), alphas=(0.7, 0.3), betas=(0.2, 0.9), ratios=(0.4, 0.2)),
    cref.Case(swin=False, sharpen=0.5),
    cref.Case(schedule="model"),
    cref.Case(schedule="static3", stage_steps=(4, 2)),
], ids=["official-odd", "even-weights", "no-swin", "model-shift", "static-shift-3"])
def test_cascade_from_a_prompt_matches_the_reference_loop(parts, case):
    ours = _compare(parts, case, torch.zeros(1, 16, *LATENT))
    assert [s["samples"].shape[-2:] for s in ours.stages] == [LATENT, (8, 8), (16, 16)]
    assert ours.stored_bytes > 0


@pytest.mark.parametrize(("scales", "stage_steps"), [((2.0, 4.0), (4, 6)), ((2.0, 3.0, 4.0), (3, 2, 5))],
                         ids=["second-longer", "third-reads-three-passes"])
def test_a_longer_stage_reads_the_latest_prediction_at_each_timestep(parts, scales, stage_steps):
    """The official store is one dict for the run (flux_pipeline_hiflow.py: pred_x0_dict[t] after every step of
    every pass): where the previous stage did not run a timestep, a stage reads the latest pass that did, resized.
    (4, 6): stage 2 reads steps 0-1 from the base pass; (3, 2, 5): stage 3 reads 1-2 from the base, 3 from stage 1,
    4-5 from stage 2."""
    case = cref.Case(scales=scales, stage_steps=stage_steps, guidance=(4.5,) * len(scales),
                     alphas=(1.0,) * len(scales), betas=(0.5,) * len(scales), ratios=(0.3,) * len(scales))
    ours = _compare(parts, case, torch.zeros(1, 16, *LATENT))
    assert [tuple(s["samples"].shape[-2:]) for s in ours.stages][-1] == (16, 16)


def test_cascade_from_an_image_with_denoise_below_one(parts):
    model, vae, _, _ = parts
    image = torch.rand(1, 32, 32, 3, generator=torch.Generator().manual_seed(5))
    latent = vae.encode(image)
    case = cref.Case(steps=8, denoise=0.5, stage_steps=(4, 2))
    _compare(parts, case, latent)
    with pytest.raises(ValueError, match="at most the 4 base steps that denoise 0.5 runs"):  # settings are checked
        settings = _settings(cref.Case(steps=8, denoise=0.5, stage_steps=(5, 2)))  # when made, before any run
        _pack("nodes.cascade").run_cascade(model, parts[2], parts[3], vae, {"samples": latent}, 0, settings)


@pytest.mark.parametrize("patch", ["dype", "sega", "dype+sega"])
def test_dype_and_sega_in_the_stages(parts, patch):
    model = parts[0]
    sega_settings = _pack("spectral").SegaSettings(recipe="refined")
    clone = _pack("nodes.rope_patch.clone")
    stage = dype(model, method="yarn") if "dype" in patch else model
    if "sega" in patch:
        stage = clone.patch_model(stage, lambda c: c.with_sega(sega_settings, BASE_PX))
    case = cref.Case(stage_steps=(4, 2))
    ours = _compare(parts, case, torch.zeros(1, 16, *LATENT), stage_model=stage)
    official = _pack("nodes.cascade").run_cascade(model, parts[2], parts[3], parts[1], {"samples": torch.zeros(
        1, 16, *LATENT)}, 3, _settings(case))
    assert not torch.equal(ours.latent["samples"], official.latent["samples"])  # the stage model is DyPE's/SEGA's


def test_dype_positions_in_the_stages_follow_each_steps_padded_grid(parts):
    """What the composition does to positions and temperature: every stage call's rotary table is DyPE's (yarn:
    positions and YaRN temperature) for that call's own token grid, the swin-padded one included (one more token
    per axis on even steps), at that call's sigma, over the trained grid; nothing of the official NTK x 10 or
    proportional attention is added."""
    from capture import capture
    from patching import BASE_TOKENS, check_tables

    model, vae, pos, neg = parts
    fam = tiny_models.FAMILIES["flux"]
    with capture(dype(model, method="yarn")) as (stage, calls):
        _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 3,
                                          _settings(cref.Case(stage_steps=(4, 2))), stage_model=stage)
    grids = [(call.x.shape[-2] // 2, call.x.shape[-1] // 2) for call in calls]
    assert grids == [(5, 5), (4, 4), (5, 5), (4, 4), (9, 9), (8, 8)]  # stage 1 (4 steps), stage 2 (2): padded first
    for call, grid in zip(calls, grids, strict=True):
        check_tables(fam, [call], grid, BASE_TOKENS, method="yarn")
    with pytest.raises(AssertionError):  # the padded call is not the unpadded grid's table: the check can fail
        check_tables(fam, [calls[4]], (8, 8), BASE_TOKENS, method="yarn")


def test_qwen_image_single_frame_latents_match_the_reference(comfy_host):
    """The family rule on Qwen-Image: 5-D (B, C, 1, H, W) latents, its Wan VAE, no guidance input."""
    from headless import tiny_pack

    qwen = (tiny_models.build_qwen(), tiny_pack.build_vae("qwen_image"), tiny_models.qwen_cond(7, 1),
            tiny_models.qwen_cond(5, 2))
    ours = _compare(qwen, cref.Case(stage_steps=(4, 2), guidance=(0.0, 0.0)), torch.zeros(1, 16, 1, *LATENT))
    assert ours.latent["samples"].shape == (1, 16, 1, 16, 16)


def test_video_families_are_refused_by_name(comfy_host):
    import tiny_video

    families = _pack("nodes.families")
    with pytest.raises(families.UnsupportedModelError, match="does not run video models.*Wan"):
        _pack("nodes.cascade.families").cascade_family(tiny_video.build("wan21"), "HiFlow Cascade")


def test_official_stage_table_is_ntk_theta_times_the_proportional_temperature(parts):
    import comfy.ldm.flux.layers

    model = parts[0]
    adapter = _pack("nodes.cascade.families").cascade_family(model, "HiFlow Cascade")
    clone = _pack("nodes.cascade.hiflow_model").official_stage_model(model, adapter, 10.0, True)
    embedder = clone.object_patches[adapter.embedder_attr]
    original = model.get_model_object(adapter.embedder_attr)
    ids = torch.zeros(1, 7 + 64, 3)
    ids[0, 7:, 1] = torch.arange(8).repeat_interleave(8).float()
    ids[0, 7:, 2] = torch.arange(8).repeat(8).float()
    plain = comfy.ldm.flux.layers.EmbedND(sum(original.axes_dim), original.theta * 10.0, list(original.axes_dim))
    m = (math.log(71) / math.log(64 * 64 + 512)) ** 0.25  # FLUX.1 trained 1024²: 64² tokens + 512 text
    torch.testing.assert_close(embedder(ids), plain(ids) * m, rtol=1e-6, atol=0)
    assert model.object_patches == {} and model.get_model_object(adapter.embedder_attr) is original


def test_same_inputs_twice_and_the_model_is_untouched(parts):
    model, vae, pos, neg = parts
    hiflow = _pack("nodes.cascade")
    latent = torch.zeros(1, 16, *LATENT)
    before = tiny_models.sample(model, "flux", LATENT, seed=1)
    runs = [hiflow.run_cascade(model, pos, neg, vae, {"samples": latent}, 9, _settings(cref.Case())) for _ in "ab"]
    assert torch.equal(runs[0].latent["samples"], runs[1].latent["samples"])
    assert model.object_patches == {} and not model.model_options.get("transformer_options")
    assert torch.equal(tiny_models.sample(model, "flux", LATENT, seed=1), before)


def test_an_interrupt_leaves_nothing_behind(parts, monkeypatch):
    import comfy.model_management

    model, vae, pos, neg = parts
    hiflow = _pack("nodes.cascade")
    calls = {"n": 0}

    def interrupt_on_the_eighth_step():
        calls["n"] += 1
        if calls["n"] == 8:  # inside the first stage
            raise comfy.model_management.InterruptProcessingException()

    monkeypatch.setattr(comfy.model_management, "throw_exception_if_processing_interrupted",
                        interrupt_on_the_eighth_step)
    latent = {"samples": torch.zeros(1, 16, *LATENT)}
    with pytest.raises(comfy.model_management.InterruptProcessingException):
        hiflow.run_cascade(model, pos, neg, vae, latent, 9, _settings(cref.Case()))
    monkeypatch.undo()
    assert model.object_patches == {}
    again = hiflow.run_cascade(model, pos, neg, vae, latent, 9, _settings(cref.Case()))
    fresh = hiflow.run_cascade(model, pos, neg, vae, latent, 9, _settings(cref.Case()))
    assert torch.equal(again.latent["samples"], fresh.latent["samples"])


@pytest.mark.parametrize(("field", "value", "message"), [
    ("scales", "2, x", "'scales' must be numbers"),
    ("alphas", "1, 2, 3", "'alphas' has 3 values for 2 stages"),
    ("scales", "4, 2", "'scales' must grow"),
    ("stage_steps", "40, 10", "stage 1 has 40 steps"),
    ("ntk_factor", "0, 10", "'ntk_factor' values must be > 0"),
    ("schedule", "shift 3", "'schedule' must be one of"),
])
def test_bad_settings_name_the_input(field, value, message):
    settings = _pack("nodes.cascade.settings")
    text = dict(settings.OFFICIAL)
    text[field] = value
    with pytest.raises(ValueError, match=message):
        settings.HiFlowSettings(steps=30, denoise=1.0, cfg=1.0, **text)


def test_bad_models_and_latents_are_refused_by_name(parts):
    model, vae, pos, neg = parts
    hiflow = _pack("nodes.cascade")
    families = _pack("nodes.families")
    settings = _settings(cref.Case())
    with pytest.raises(families.UnsupportedModelError, match="already patched by DyPE / SEGA.*'stage_model'"):
        hiflow.run_cascade(dype(model), pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 0, settings)
    with pytest.raises(ValueError, match="noise mask"):
        hiflow.run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT),
                                                  "noise_mask": torch.ones(1, 1, 4, 4)}, 0, settings)
    with pytest.raises(TypeError, match="'model' must be a ComfyUI MODEL"):
        hiflow.run_cascade(object(), pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 0, settings)
