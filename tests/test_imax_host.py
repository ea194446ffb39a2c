"""The I-Max cascade on the real host with tiny models: against the reference loop of the official code
(tests/imax_cascade_reference.py), from a prompt and from an image; its stage model against the official stage
transformer; DyPE and SEGA in the stages; errors."""

from __future__ import annotations

import hiflow_models
import imax_cascade_reference as iref
import imax_reference as ref
import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens: the stage at 16 x 16 latent pixels (8 x 8 tokens, 9 x 9 swin-padded)
NODE = "I-Max Cascade"


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _settings(case: iref.Case, **extra):
    return _pack("nodes.cascade").ImaxSettings(
        steps=case.steps, denoise=case.denoise, cfg=case.cfg, scales=case.scales, stage_steps=case.stage_steps,
        stage_guidance=case.guidance, base_shift=case.base_shift, stage_shift=case.stage_shift,
        guidance_schedule=case.schedule, wavelet_level=case.level, swin=case.swin, **extra)


def stage_model(model, trained=None, duplicate=True, factor=10.0):
    adapter = _pack("nodes.cascade.families").cascade_family(model, NODE)
    return _pack("nodes.cascade.imax_model").imax_stage_model(model, adapter, factor, True, duplicate, trained)


def _compare(parts, case, latent, seed=3, stage=None, **extra):
    model, vae, pos, neg = parts
    ours = _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": latent}, seed,
                                              _settings(case, **extra), stage_model=stage)
    duplicate = extra.get("text_duplication", True)
    stages = [stage or stage_model(model, duplicate=duplicate) for _ in case.scales]
    want, outs = iref.reference_cascade(model, stages, pos, neg, vae, latent, seed, case)
    for got, expected in zip(ours.stages, outs, strict=True):
        assert got["samples"].shape == expected.shape
        torch.testing.assert_close(got["samples"], expected, rtol=1e-4, atol=1e-4)
    return ours


def test_schedules_are_the_official_static_shifts_or_the_models_own(parts):
    """diffusers 0.30.3 / 0.31.0 with the README's config line: static shift time_shift_1 (base) and time_shift_2
    (stage) on linspace(1, 1/N, N) (docs/imax.md); 0 falls back to the MODEL's own shift."""
    imax = _pack("nodes.cascade.imax")
    for steps, shift in [(30, 3.0), (30, 6.0), (7, 10.0)]:
        torch.testing.assert_close(imax.imax_sigmas(parts[0], steps, shift).double(), ref.static_sigmas(steps, shift),
                                   rtol=0, atol=1e-7)
    own = _pack("nodes.cascade.schedule").model_sigmas(parts[0], 30).float()
    torch.testing.assert_close(imax.imax_sigmas(parts[0], 30, 0.0), own)
    assert float((imax.imax_sigmas(parts[0], 30, 3.0) - own).abs().max()) > 0.01


@pytest.mark.parametrize(("case", "extra"), [
    (iref.Case(), {}),  # the README's rule at 6 + 6 steps
    (iref.Case(schedule="cosine_shift", level=2, stage_steps=(5,)), {}),  # odd: ends padded, cropped back
    (iref.Case(schedule="constant", swin=False, stage_shift=(10.0,)), {}),
    (iref.Case(schedule="disable", steps=4, stage_steps=(3,)), {"text_duplication": False}),
    (iref.Case(scales=(2.0, 4.0), stage_steps=(4, 5), guidance=(5.0, 7.0), stage_shift=(3.0, 6.0)), {}),
], ids=["readme", "cosine-shift-level-2-odd", "constant-no-swin", "disable", "two-stages"])
def test_cascade_from_a_prompt_matches_the_reference_loop(parts, case, extra):
    ours = _compare(parts, case, torch.zeros(1, 16, *LATENT), **extra)
    assert ours.latent["samples"].shape[-2:] == (16, 16) and ours.stored_bytes == 0


def test_text_duplication_in_the_whole_cascade(parts):
    """A trained grid of 2 x 2 tokens in the stage model: the 8 x 8 token stage puts down 4 x 4 prompt copies."""
    stage = stage_model(parts[0], trained=(2.0, 2.0))
    _compare(parts, iref.Case(stage_steps=(4,)), torch.zeros(1, 16, *LATENT), stage=stage)


def test_cascade_from_an_image_with_denoise_below_one(parts):
    model, vae, _, _ = parts
    image = torch.rand(1, 32, 32, 3, generator=torch.Generator().manual_seed(5))
    _compare(parts, iref.Case(steps=8, denoise=0.5, stage_steps=(4,)), vae.encode(image))


@pytest.mark.parametrize(("duplicate", "trained", "grid"), [(True, 2, (16, 16)), (True, 2, (18, 18)),
                                                           (False, 2, (16, 16)), (True, 3, (14, 20)),
                                                           (True, 64, (16, 16))])
def test_stage_model_is_the_official_stage_transformer(parts, duplicate, trained, grid):
    """One call of the stage clone against transformer_flux.py's forward on a copy of the model: the prompt
    repeated per copy, the copies' text ids moved, NTK x 10 with its clip, proportional attention (padded and
    non-square grids: 18 = a swin-padded 16)."""
    import comfy.patcher_extension as ext

    model, _, pos, _ = parts
    clone = stage_model(model, (float(trained),) * 2, duplicate).clone()
    seen = []

    def record(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None, **kw):
        out = executor(x, t, c_concat, c_crossattn, control, transformer_options, **kw)
        seen.append((x, t, c_crossattn, kw, out))
        return out

    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_record", record)
    tiny_models.sample(clone, "flux", grid, seed=4, steps=1)
    x, t, context, kw, out = seen[0]  # this wrapper runs inside the stage model's: the text is repeated already
    prompt = pos[0][0]  # what tiny_models.sample conditions on (cfg 1: the positive only)
    assert context.shape[1] == prompt.shape[1] * (max(1, grid[0] // 2 // trained) * max(1, grid[1] // 2 // trained)
                                                  if duplicate else 1)
    want = iref.official_stage_forward(model, x, t, prompt, kw.get("y"), kw.get("guidance"), 10.0, trained,
                                       duplicate)
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-5)
    assert model.object_patches == {}


def test_each_stage_call_is_told_its_stage_step(parts):
    """rope_patch/stage_step.py: what HRDiT's SPA reads to act on a stage's leading steps only."""
    import comfy.patcher_extension as ext

    model, vae, pos, neg = parts
    told = []
    stage = stage_model(model).clone()

    def record(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None, **kw):
        step = _pack("nodes.rope_patch.stage_step").stage_step(transformer_options)
        told.append((step.stage, step.step, step.steps, float(step.sigma)))
        return executor(x, t, c_concat, c_crossattn, control, transformer_options, **kw)

    stage.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_record", record)
    _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 1,
                                       _settings(iref.Case(stage_steps=(3,))), stage_model=stage)
    sigmas = ref.static_sigmas(3, 6.0)
    assert [s[:3] for s in told] == [(0, 0, 3), (0, 1, 3), (0, 2, 3)]
    assert [s[3] for s in told] == pytest.approx([float(v) for v in sigmas[:3]], abs=1e-6)


@pytest.mark.parametrize("patch", ["dype", "sega", "dype+sega"])
def test_dype_and_sega_in_the_stages(parts, patch):
    model = parts[0]
    clone = _pack("nodes.rope_patch.clone")
    stage = dype(model, method="yarn") if "dype" in patch else model
    if "sega" in patch:
        paper = _pack("spectral").SegaSettings(recipe="paper")
        stage = clone.patch_model(stage, lambda c: c.with_sega(paper, BASE_PX))
    case = iref.Case(stage_steps=(4,))
    ours = _compare(parts, case, torch.zeros(1, 16, *LATENT), stage=stage)
    official = _pack("nodes.cascade").run_cascade(model, parts[2], parts[3], parts[1],
                                                  {"samples": torch.zeros(1, 16, *LATENT)}, 3, _settings(case))
    assert not torch.equal(ours.latent["samples"], official.latent["samples"])


def test_qwen_image_single_frame_latents_without_text_duplication(comfy_host):
    from headless import tiny_pack

    qwen = (tiny_models.build_qwen(), tiny_pack.build_vae("qwen_image"), tiny_models.qwen_cond(7, 1),
            tiny_models.qwen_cond(5, 2))
    families = _pack("nodes.families")
    with pytest.raises(families.UnsupportedModelError, match="text duplication is written for FLUX.1.*Qwen"):
        _pack("nodes.cascade").run_cascade(qwen[0], qwen[2], qwen[3], qwen[1],
                                           {"samples": torch.zeros(1, 16, 1, *LATENT)}, 0, _settings(iref.Case()))
    ours = _compare(qwen, iref.Case(stage_steps=(4,), guidance=(0.0,)), torch.zeros(1, 16, 1, *LATENT),
                    text_duplication=False)
    assert ours.latent["samples"].shape == (1, 16, 1, 16, 16)


def test_same_inputs_twice_and_the_model_is_untouched(parts):
    model, vae, pos, neg = parts
    cascade = _pack("nodes.cascade")
    before = tiny_models.sample(model, "flux", LATENT, seed=1)
    runs = [cascade.run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 9,
                                _settings(iref.Case(stage_steps=(3,)))) for _ in "ab"]
    assert torch.equal(runs[0].latent["samples"], runs[1].latent["samples"])
    assert model.object_patches == {} and not model.model_options.get("transformer_options")
    assert torch.equal(tiny_models.sample(model, "flux", LATENT, seed=1), before)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("scales", "4, 2", "'scales' must grow"),
    ("stage_shift", "6, 6", "'stage_shift' has 2 values for 1 stages"),
    ("guidance_schedule", "cosine", "'guidance_schedule' must be one of"),
    ("wavelet_level", 0, "'wavelet_level' must be a whole number from 1 to 10"),
    ("base_shift", -1.0, "'base_shift' must be a number from 0 to 100"),
    ("text_duplication", "False", "'text_duplication' must be True or False"),
])
def test_bad_settings_name_the_node_and_the_input(field, value, message):
    with pytest.raises(ValueError, match=f"I-Max Cascade: {message}"):
        _pack("nodes.cascade").ImaxSettings(**{field: value})


def test_the_stage_embedder_outside_the_clones_calls_is_the_models_own(parts):
    """The object patch outlives a run until ComfyUI loads another clone: a call that bypasses the clone's wrapper
    (no call facts) gets the model's own table, never a stale one."""
    model = parts[0]
    original = model.get_model_object("diffusion_model.pe_embedder")
    embedder = stage_model(model).get_model_object("diffusion_model.pe_embedder")
    ids = torch.zeros(1, 11, 3)
    ids[0, 7:, 1] = torch.tensor([0.0, 0.0, 1.0, 1.0])
    ids[0, 7:, 2] = torch.tensor([0.0, 1.0, 0.0, 1.0])
    assert embedder is not original and torch.equal(embedder(ids), original(ids))
