"""The cascade room's interface as a rule built on HiFlow's uses it (HRDiT's, docs/ARCHITECTURE.md): its own
settings class naming its node, a stage model per stage (NTK 4 then 10, HRDiT's configs/pipeline.json), and the
stage step every call is told, so a transform can act on a stage's leading steps only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import hiflow_models
import pytest
import tiny_models
import torch
from patching import _pack

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _rule_settings():
    settings = _pack("nodes.cascade.settings")

    @dataclass(frozen=True)
    class LeadingSettings(settings.HiFlowSettings):
        node: ClassVar[str] = "Leading Cascade"

    return LeadingSettings


def test_a_rule_on_hiflows_gets_its_stage_models_and_every_calls_stage_step(parts):
    import comfy.patcher_extension as ext

    model, vae, pos, neg = parts
    cascade = _pack("nodes.cascade")
    hiflow_model = _pack("nodes.cascade.hiflow_model")
    read = _pack("nodes.rope_patch.stage_step").stage_step
    seen = []  # (stage, step, steps, the embedder's theta) per model call of a stage

    grids = []

    def per_stage(context):
        grids.append(context.grid)
        clone = hiflow_model.official_stage_model(context.model, context.adapter, (4.0, 10.0)[context.index], True,
                                                  "Leading Cascade").clone()

        def record(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None, **kw):
            step = read(transformer_options)
            theta = clone.get_model_object("diffusion_model.pe_embedder").theta
            seen.append((step.stage, step.step, step.steps, theta))
            return executor(x, t, c_concat, c_crossattn, control, transformer_options, **kw)

        clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_record", record)
        return clone

    settings = _rule_settings()(steps=8, scales=(2.0, 4.0), stage_steps=(5, 3), ntk_factor=(4.0, 10.0), swin=False)
    method = cascade.HiFlowMethod(settings, stage_models=per_stage)
    assert method.node == "Leading Cascade"
    out = cascade.run_passes(method, model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 2)
    theta = model.get_model_object("diffusion_model.pe_embedder").theta
    assert seen == [(0, i, 5, theta * 4) for i in range(5)] + [(1, i, 3, theta * 10) for i in range(3)]
    assert grids == [(8, 8), (16, 16)]  # each stage's latent grid: what HAP's masks are built for
    assert out.latent["samples"].shape[-2:] == (16, 16) and torch.isfinite(out.latent["samples"]).all()
    with pytest.raises(ValueError, match="^Leading Cascade: 'stage_steps' has 3 values for 2 stages"):
        _rule_settings()(stage_steps=(17, 10, 1))


def test_the_base_pass_is_told_no_stage_step(parts):
    """Outside a stage (the base pass) a call's options carry none: a transform stays off there."""
    import comfy.patcher_extension as ext

    model, vae, pos, neg = parts
    read = _pack("nodes.rope_patch.stage_step").stage_step
    steps = []
    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_record",
                               lambda executor, x, t, *a, **kw: (steps.append(read(a[3])), executor(x, t, *a, **kw))[1])
    hiflow = _pack("nodes.cascade.hiflow_model")
    adapter = _pack("nodes.cascade.families").cascade_family(model, "HiFlow Cascade")
    stage = hiflow.official_stage_model(model, adapter, 10.0, True)
    settings = _pack("nodes.cascade").HiFlowSettings(steps=4, stage_steps=(2, 1))
    _pack("nodes.cascade").run_cascade(clone, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 0, settings,
                                       stage_model=stage)
    assert steps == [None] * 4


def test_the_store_holds_what_later_stages_read(parts):
    """The defaults' structure at tiny size: the base pass's last N1 predictions, overwritten by stage 1's, are the
    peak (docs/hiflow.md, "Memory"); nothing of stage 2 is stored (no stage after it)."""
    model, vae, pos, neg = parts
    settings = _pack("nodes.cascade").HiFlowSettings(steps=6, stage_steps=(4, 2))
    out = _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 0,
                                             settings)
    per_value = 4 * 16  # float32, 16 channels
    stage_one = sum(per_value * (8 + 2 * (i % 2 == 0)) ** 2 for i in range(4))  # swin pads even steps: 10², 8²
    assert out.stored_bytes == max(stage_one, per_value * 4**2 * 6)
    assert math.isclose(out.stored_bytes, stage_one)
