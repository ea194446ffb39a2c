"""The three cascades in the weight dtypes users run (tests/weight_dtypes.py: bf16, fp16, fp8 cast to bf16 / fp16):
HiFlow and I-Max on the tiny FLUX and Qwen-Image (I-Max's text duplication is FLUX.1's: off on Qwen-Image), HRDiT
with SPA and HAP on FLUX (FLUX.1 only: it refuses others by name). Every pass finite, the table the first block
receives in stock's dtype, the last stage within the tolerance of the float32 cascade of the same stored weights
(the VAE in float32 in both)."""

from __future__ import annotations

import hiflow_cascade_reference as cref
import hiflow_models
import imax_cascade_reference as iref
import pytest
import tiny_models
import torch
import weight_dtypes as wd
from patching import _pack
from test_weight_dtypes import MUTANTS

pytestmark = pytest.mark.usefixtures("comfy_host")

#: Input latents: 2 x 2 tokens (HiFlow's stages at 4 x 4 and 8 x 8 tokens, I-Max's at 8 x 8); HRDiT 4 x 4 tokens, so
#: its stages (8 x 8, 16 x 16 tokens) hold one and four of HAP's 64-token blocks.
LATENTS = {"hiflow": (4, 4), "imax": (4, 4), "hrdit": (8, 8)}
CASES = [("flux", "hiflow"), ("flux", "imax"), ("flux", "hrdit"), ("qwen_image", "hiflow"), ("qwen_image", "imax")]
_CACHE: dict = {}
#: The last stage's relative error allowed, per family and compute dtype: about 1.7x the largest measured (CPU,
#: torch 2.13, both hosts; fp8 weights within those of their compute dtype): FLUX bf16 1.59e-2 (HRDiT), fp16
#: 1.93e-3; Qwen-Image bf16 4.9e-3 (I-Max), fp16 6.5e-4. A pass compounds the one before it, so these sit above
#: the one-pass tolerances (weight_dtypes.TOLERANCES). HiFlow's stage table rounded as the one-pass mutants moves
#: FLUX bf16 by 3.9e-2, fp16 6.5e-3, Qwen-Image bf16 1.6e-2, fp16 5.8e-3: past them.
TOLERANCES = {("flux", torch.bfloat16): 2.6e-2, ("flux", torch.float16): 3.4e-3,
              ("qwen_image", torch.bfloat16): 8e-3, ("qwen_image", torch.float16): 1.1e-3}


@pytest.fixture(autouse=True, scope="module")
def _models_dropped_with_the_module():
    yield
    _CACHE.clear()


@pytest.fixture
def tiny_hap_plan(monkeypatch):
    """HAP's plan pruning at these sizes (the authors' alpha 2048 keeps every entry below 4096 tokens): each image
    block sees itself, the anchors and the text, as in tests/test_hrdit_cascade.py."""
    scope = _pack("nodes.hap.scope_plan").ScopePlan(((64.0,) * 2,) * 2, ((0.0,) * 2,) * 2, "tests")
    monkeypatch.setattr(_pack("nodes.cascade.hrdit"), "official_plan", lambda: scope)


def settings(family: str, cascade: str):
    """Two steps a stage, four in the base pass; the stages' distilled guidance 4 (exact in bf16 after the host's
    x1000, as the conditioning's: the official 4.5 / 6 / 7 are not, and ComfyUI casts the guidance to the model's
    dtype, so a bf16 FLUX cascade would sample another guidance than its float32 reference)."""
    cascades = _pack("nodes.cascade")
    if cascade == "imax":
        c = iref.Case(steps=4, stage_steps=(2,), cfg=2.0, guidance=(4.0,))
        return cascades.ImaxSettings(
            steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
            base_shift=c.base_shift, stage_shift=c.stage_shift, guidance_schedule=c.schedule, wavelet_level=c.level,
            swin=c.swin, text_duplication=family == "flux")
    c = cref.Case(steps=4, stage_steps=(2, 2), cfg=2.0, guidance=(4.0, 4.0))
    common = dict(steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
                  alphas=c.alphas, betas=c.betas, filter_ratio=c.ratios, sharpen=c.sharpen, swin=c.swin)
    if cascade == "hiflow":
        return cascades.HiFlowSettings(**common)
    return cascades.HrditSettings(**common, spa=True, hap=True, spa_steps=(1, 1), group_num=3, global_anchor=2)


def parts(family: str):
    if ("parts", family) not in _CACHE:
        fam = tiny_models.FAMILIES[family]
        if family == "flux":
            vae = hiflow_models.flux_vae()
            conds = fam.cond(7, 1, guidance=4.0), fam.cond(7, 2, guidance=4.0)  # 4.0: exact in bf16 (see matrix)
        else:
            from headless import tiny_pack

            vae, conds = tiny_pack.build_vae("qwen_image"), (fam.cond(7, 1), fam.cond(7, 2))
        _CACHE["parts", family] = vae, *conds
    return _CACHE["parts", family]


def cascade(model, family: str, kind: str) -> list[torch.Tensor]:
    vae, positive, negative = parts(family)
    latent = tiny_models.FAMILIES[family].latent(1, *LATENTS[kind])
    result = _pack("nodes.cascade").run_cascade(model, positive, negative, vae, {"samples": latent}, 3,
                                                settings(family, kind))
    return [stage["samples"] for stage in result.stages]


def run(family: str, kind: str, case: wd.WeightDtype):
    """(every pass's latent, the tables' dtypes at the first block, the last stage's relative error to the float32
    cascade of the same stored weights)."""
    if ("models", family, case.name) not in _CACHE:
        _CACHE["models", family, case.name] = wd.build(family, case), wd.reference(family, case)
    model, reference = _CACHE["models", family, case.name]
    key = ("reference", family, kind, case.name)
    if key not in _CACHE:
        _CACHE[key] = cascade(reference, family, kind)
    with wd.BlockTables(model) as tables:
        passes = cascade(model, family, kind)
    want = _CACHE[key]
    assert len(passes) == len(want)
    return passes, set(tables.dtypes), wd.relative_error(passes[-1], want[-1])


@pytest.mark.usefixtures("tiny_hap_plan")
@pytest.mark.parametrize("case", wd.CASES, ids=lambda c: c.name)
@pytest.mark.parametrize(("family", "kind"), CASES)
def test_cascades_in_each_weight_dtype(family, kind, case, record_property):
    passes, dtypes, error = run(family, kind, case)
    record_property("relative_error", error)
    assert all(torch.isfinite(latent).all() for latent in passes)
    assert dtypes == {torch.float32 if family == "flux" else case.compute_dtype}
    allowed = TOLERANCES[family, case.compute_dtype]
    assert error <= allowed, f"{family} {kind} {case.name}: {error:.2e} > {allowed:.1e}"


@pytest.mark.parametrize("case", [wd.BY_NAME["bf16"], wd.BY_NAME["fp16"]], ids=lambda c: c.name)
@pytest.mark.parametrize("family", ["flux", "qwen_image"])
def test_the_tolerance_fails_for_a_stage_table_of_lower_precision(family, case, monkeypatch, record_property):
    """HiFlow's official stage table (theta x 10, times the proportional temperature) rounded as in
    tests/test_weight_dtypes.py's mutants: past the tolerance."""
    rounding = MUTANTS[family, case.compute_dtype]
    handed_over = torch.bfloat16 if rounding == torch.bfloat16 else torch.float32
    run(family, "hiflow", case)  # the float32 reference, before the mutant
    stage = _pack("nodes.cascade.hiflow_model").HiFlowStageEmbedder
    real = stage.forward
    monkeypatch.setattr(stage, "forward", lambda self, ids: real(self, ids).to(rounding).to(handed_over))
    passes, _, error = run(family, "hiflow", case)
    record_property("relative_error", error)
    assert all(torch.isfinite(latent).all() for latent in passes)
    assert error > TOLERANCES[family, case.compute_dtype], f"the mutant's {error:.2e} is within the tolerance"
