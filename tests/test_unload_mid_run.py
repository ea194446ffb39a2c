"""Memory freed in the middle of a run (nodes/rope_patch/reload.py): another node's hook calls
``comfy.model_management.unload_all_models()`` once, in a model call of the first stage of a cascade (HiFlow, I-Max,
HRDiT with SPA and HAP) or of a one-pass run (DyPE, SEGA, DyPE -> SEGA): before the pack's wrappers (an APPLY_MODEL
wrapper on the input MODEL), inside the call after them (a DIFFUSION_MODEL wrapper), or between two steps (a sampler
callback). The unload takes the clone's object patches off (ComfyUI restores the original modules); the clone is
loaded again and the result equals the undisturbed run's bit for bit. Without the reload the same hooks change the
result or stop the run (the control at the end)."""

from __future__ import annotations

import hiflow_models
import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, dype
from test_weight_dtypes_cascades import LATENTS, settings

pytestmark = pytest.mark.usefixtures("comfy_host")

HOOKS = ("apply_model", "diffusion_model")  # before the pack's wrappers, inside the call after them


@pytest.fixture(scope="module")
def flux(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae()


@pytest.fixture
def tiny_hap_plan(monkeypatch):
    """HAP's plan pruning at these sizes, as tests/test_weight_dtypes_cascades.py's."""
    scope = _pack("nodes.hap.scope_plan").ScopePlan(((64.0,) * 2,) * 2, ((0.0,) * 2,) * 2, "tests")
    monkeypatch.setattr(_pack("nodes.cascade.hrdit"), "official_plan", lambda: scope)


class UnloadOnce:
    """A model-call hook of another node: at the ``at``-th call whose latent is wider than ``above`` latent pixels
    (a cascade's stages, not its base pass), it frees every model, once, and records which embedder the shared
    model holds right after."""

    def __init__(self, at: int, embedder_attr: str, above: int = 0) -> None:
        self.at, self.attr, self.above = at, embedder_attr, above
        self.calls, self.after = 0, []

    def __call__(self, executor, x, *args, **kwargs):
        if x.shape[-1] > self.above:
            self.calls += 1
            if self.calls == self.at:
                import comfy.model_management
                import comfy.utils

                comfy.model_management.unload_all_models()
                base_model = getattr(executor, "class_obj", None)
                holder = base_model if hasattr(base_model, "diffusion_model") else None
                if holder is not None:
                    self.after.append(type(comfy.utils.get_attr(holder, self.attr)).__name__)
        return executor(x, *args, **kwargs)

    def on(self, model, hook: str):
        """A clone of ``model`` carrying this hook as an APPLY_MODEL or DIFFUSION_MODEL wrapper."""
        import comfy.patcher_extension as ext

        clone = model.clone()
        clone.add_wrapper_with_key(getattr(ext.WrappersMP, hook.upper()), "tests_unload", self)
        return clone


def cascade(model, vae, kind: str) -> list[torch.Tensor]:
    fam = tiny_models.FAMILIES["flux"]
    result = _pack("nodes.cascade").run_cascade(
        model, fam.cond(7, 1, guidance=4.0), fam.cond(7, 2, guidance=4.0), vae,
        {"samples": fam.latent(1, *LATENTS[kind])}, 3, settings("flux", kind))
    return [stage["samples"] for stage in result.stages]


@pytest.mark.usefixtures("tiny_hap_plan")
@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("kind", ["hiflow", "imax", "hrdit"])
def test_a_cascade_freed_mid_stage_equals_the_clean_run(flux, kind, hook):
    model, vae = flux
    clean = cascade(model, vae, kind)
    unload = UnloadOnce(1, "diffusion_model.pe_embedder", above=LATENTS[kind][1])  # stage 1's first call of 2
    passes = cascade(unload.on(model, hook), vae, kind)
    assert unload.calls >= 2
    if hook == "apply_model":  # the hook sees the stage's model right after the unload: its own embedder again
        assert unload.after == ["EmbedND"]
    for got, want in zip(passes, clean, strict=True):
        assert torch.equal(got, want)


def sega(model, recipe: str = "refined"):
    settings_ = _pack("spectral").SegaSettings(recipe=recipe)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_sega(settings_, BASE_PX))


PATCHES = {"dype": dype, "sega": sega, "dype-sega": lambda m: sega(dype(m))}
GRID = (12, 12)


def one_pass(model, family: str, callback=None) -> torch.Tensor:
    return tiny_models.sample(model, family, tokens=GRID, steps=3, cfg=2.0, callback=callback,
                              negative=tiny_models.FAMILIES[family].cond(7, 2))


def hooked(model, patch: str, where: str, at: int, family: str):
    """(the model to sample, the hook or None): the hook on the input MODEL (before the pack's wrappers), on the
    patched clone inside the call, or a sampler callback between two steps."""
    fam = tiny_models.FAMILIES[family]
    unload = UnloadOnce(at, fam.embedder_attr)
    if where == "apply_model":
        return PATCHES[patch](unload.on(model, "apply_model")), unload
    if where == "diffusion_model":
        return unload.on(PATCHES[patch](model), "diffusion_model"), unload
    return PATCHES[patch](model), None


@pytest.mark.parametrize("where", [*HOOKS, "callback"])
@pytest.mark.parametrize("patch", PATCHES)
@pytest.mark.parametrize("family", ["flux", "qwen_image"])
def test_one_pass_freed_mid_run_equals_the_clean_run(family, patch, where):
    """At the first call (the rest of the run follows) and at the last (no later call would notice)."""
    model = tiny_models.FAMILIES[family].build(0)
    clean = one_pass(PATCHES[patch](model), family)
    for at in (1, 3):
        sampled, unload = hooked(model, patch, where, at, family)

        def callback(step, *_, at=at):
            if where == "callback" and step == at - 1:
                import comfy.model_management

                comfy.model_management.unload_all_models()

        assert torch.equal(one_pass(sampled, family, callback), clean)
        if unload is not None:  # a call the unload cut into is made again; before it, the model is loaded first
            assert unload.calls == (4 if where == "diffusion_model" else 3)


@pytest.mark.usefixtures("tiny_hap_plan")
def test_without_the_reload_the_same_hooks_change_the_result_or_stop_the_run(flux, monkeypatch):
    """The control: with the reload off, a cascade freed inside a stage's call samples the rest of the stage without
    its stage table (silently), and a one-pass run freed inside its last call too; freed earlier, DyPE's own check
    stops the run (errors.py)."""
    monkeypatch.setattr(_pack("nodes.rope_patch.reload"), "_unloaded_patcher", lambda base_model: None)
    model, vae = flux
    for kind in ("hiflow", "imax", "hrdit"):
        clean = cascade(model, vae, kind)
        unload = UnloadOnce(1, "diffusion_model.pe_embedder", above=LATENTS[kind][1])
        assert not torch.equal(cascade(unload.on(model, "diffusion_model"), vae, kind)[1], clean[1])
    clean = one_pass(dype(model), "flux")
    assert not torch.equal(one_pass(hooked(model, "dype", "diffusion_model", 3, "flux")[0], "flux"), clean)
    with pytest.raises(_pack("nodes.rope_patch.errors").ModelUnloadedError, match="it was unloaded"):
        one_pass(hooked(model, "dype", "diffusion_model", 1, "flux")[0], "flux")


def test_fp8_weights_freed_mid_run_equal_the_clean_run():
    """fp8 weights cast to bf16 at use (tests/weight_dtypes.py): unloading and loading again moves the stored fp8
    weights, and every call casts them afresh, so the result is bit-identical too."""
    import weight_dtypes as wd

    model = wd.build("flux", wd.BY_NAME["fp8-bf16"])
    clean = one_pass(dype(model), "flux")
    for where in HOOKS:
        sampled, unload = hooked(model, "dype", where, 2, "flux")
        assert torch.equal(one_pass(sampled, "flux"), clean) and unload.calls >= 3
