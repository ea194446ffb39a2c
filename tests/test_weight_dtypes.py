"""DyPE, SEGA (each recipe) and DyPE -> SEGA in the weight dtypes users run (tests/weight_dtypes.py: bf16, fp16, and
fp8 weights cast to bf16 / fp16 at use, built as ComfyUI builds them), on the tiny FLUX and Qwen-Image: every output
finite, the rotary table the first block receives in stock's dtype (FLUX: float32, the host applies the rotation in
float32; Qwen-Image: the host casts the table to the latent's dtype itself, ``comfy/ldm/qwen_image/model.py``
``self.pe_embedder(ids).to(x.dtype)``, 0.3.75 line 422, 0.30.0 line 521, stock and patched alike: of the supported
families' embedder calls on both hosts only Qwen-Image's and its ControlNets' cast the table; Anima's rotation casts
its cos / sin to the activations' dtype, 0.30.0 ``comfy/ldm/anima/model.py`` line 39), and the output within the
dtype's tolerance of the float32 run of the same stored weights. The mutants at the end show the tolerances can
fail: a table handed over in bf16, or rounded to float8."""

from __future__ import annotations

import pytest
import tiny_models
import torch
import weight_dtypes as wd
from patching import BASE_PX, _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")

FAMILIES = ("flux", "qwen_image")
GRID = (12, 12)  # tokens: 3x the tests' trained 4-token grid on both axes
METHODS = ("dype", "sega-paper", "sega-port", "sega-refined", "dype-sega")
_CACHE: dict = {}


@pytest.fixture(autouse=True, scope="module")
def _models_dropped_with_the_module():
    yield
    _CACHE.clear()


def sega(model, recipe: str):
    settings = _pack("spectral").SegaSettings(recipe=recipe)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_sega(settings, BASE_PX))


def patched(model, method: str):
    if method == "stock":
        return model
    if method == "dype":
        return dype(model)
    if method == "dype-sega":
        return sega(dype(model), "paper")
    return sega(model, method.removeprefix("sega-"))


def sample(model, family: str) -> torch.Tensor:
    """Two steps at cfg 2 with a negative as long as the positive: one batch of two images per call (SEGA's
    per-image temperatures). FLUX's guidance 4 is exact in bf16 after the host's x1000 (3.5 is not: ComfyUI casts
    the guidance to the model's dtype, and its embedding would move by a third of a turn, stock and patched alike)."""
    fam = tiny_models.FAMILIES[family]
    extra = {"guidance": 4.0} if family == "flux" else {}
    return tiny_models.sample(model, family, tokens=GRID, steps=2, cfg=2.0, positive=fam.cond(7, 1, **extra),
                              negative=fam.cond(7, 2, **extra))


def models(family: str, case: wd.WeightDtype):
    """(the model in ``case``'s dtypes, the float32 model of the same stored weights), built once per module."""
    key = ("models", family, case.name)
    if key not in _CACHE:
        _CACHE[key] = wd.build(family, case), wd.reference(family, case)
    return _CACHE[key]


def reference_output(family: str, case: wd.WeightDtype, method: str) -> torch.Tensor:
    """The float32 run of the same stored weights, once per module."""
    key = ("reference", family, case.name, method)
    if key not in _CACHE:
        _CACHE[key] = sample(patched(models(family, case)[1], method), family)
    return _CACHE[key]


def run(family: str, case: wd.WeightDtype, method: str):
    """(output, the tables' dtypes at the first block, relative error to the float32 run of the same weights)."""
    want = reference_output(family, case, method)
    with wd.BlockTables(models(family, case)[0]) as tables:
        out = sample(patched(models(family, case)[0], method), family)
    return out, set(tables.dtypes), wd.relative_error(out, want)


def stock_table_dtypes(family: str, case: wd.WeightDtype) -> set:
    key = ("stock", family, case.name)
    if key not in _CACHE:
        _CACHE[key] = run(family, case, "stock")[1]
    return _CACHE[key]


@pytest.mark.parametrize("case", wd.CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("family", FAMILIES)
def test_stock_tables_reach_the_blocks_in_the_hosts_dtype(family, case):
    """The facts the matrix compares with: FLUX's blocks take a float32 table, Qwen-Image's the compute dtype; and
    the model is built as ComfyUI builds it: weights stored in the dtype, comfy's manual_cast layers where the
    compute dtype differs (comfy.ops.pick_operations)."""
    want = torch.float32 if family == "flux" else case.compute_dtype
    assert stock_table_dtypes(family, case) == {want}
    model = models(family, case)[0].model
    assert model.diffusion_model.img_in.weight.dtype == case.stored and model.manual_cast_dtype == case.compute
    layers = "manual_cast.Linear" if case.compute else "disable_weight_init.Linear"
    assert type(model.diffusion_model.img_in).__qualname__ == layers


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", wd.CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("family", FAMILIES)
def test_methods_in_each_weight_dtype(family, case, method, record_property):
    out, dtypes, error = run(family, case, method)
    record_property("relative_error", error)
    assert torch.isfinite(out).all()
    assert dtypes == stock_table_dtypes(family, case)
    allowed = wd.tolerance(family, case)
    assert error <= allowed, f"{family} {case.name} {method}: {error:.2e} > {allowed:.1e}"


#: Per family and compute dtype, the precision a mutant table is rounded to: handed over in bf16 where the host keeps
#: float32 (FLUX, fp16 runs), else rounded to an fp8 format (ComfyUI's fp8 weight dtypes) and handed back in float32.
MUTANTS = {("flux", torch.float16): torch.bfloat16, ("flux", torch.bfloat16): torch.float8_e4m3fn,
           ("qwen_image", torch.float16): torch.float8_e4m3fn, ("qwen_image", torch.bfloat16): torch.float8_e5m2}


@pytest.mark.parametrize("case", wd.CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("family", FAMILIES)
def test_the_tolerance_fails_for_a_table_of_lower_precision(family, case, monkeypatch, record_property):
    """Mutants of the engine's table with DyPE: handed over in bf16 (what casting it to the ids' or the model's
    dtype does on a bf16 run) on FLUX, whose host then rotates q and k in bf16: caught in fp16 runs by the dtype check
    and the tolerance; rounded to float8 and handed back in float32: caught by the tolerance alone (Qwen-Image's
    host casts every table to the compute dtype, so only a coarser one shows there). Measured (both hosts): FLUX
    fp16 5.3e-3 (fp8 weights 4.8e-3), bf16 2.8e-2 (2.9e-2); Qwen-Image fp16 5.7e-3, bf16 2.3e-2."""
    rounding = MUTANTS[family, case.compute_dtype]
    reference_output(family, case, "dype")  # computed before the mutant
    stock = stock_table_dtypes(family, case)
    embedder = _pack("nodes.rope_patch.embedder")
    real = embedder.embed_ids
    handed_over = torch.bfloat16 if rounding == torch.bfloat16 else torch.float32
    monkeypatch.setattr(embedder, "embed_ids", lambda *a, **k: real(*a, **k).to(rounding).to(handed_over))
    out, dtypes, error = run(family, case, "dype")
    record_property("relative_error", error)
    assert torch.isfinite(out).all()
    assert error > wd.tolerance(family, case), f"{case.name}: the mutant's {error:.2e} is within the tolerance"
    assert (dtypes != stock) == (handed_over == torch.bfloat16 and family == "flux")
