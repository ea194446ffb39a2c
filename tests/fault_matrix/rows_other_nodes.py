"""Fault matrix rows: other nodes on the same model: model sampling, LoRA, guiders, caches, torch.compile, ScaleROPE, references."""

from __future__ import annotations

import pytest
import torch
from capture import capture
from patching import _pack

from .lab import (
    HW,
    Lab,
    assert_tables_follow_the_schedule,
    comfy_node,
    dype,
    row,
    run_node,
)


def _model_sampling_flux(model):
    node = comfy_node("comfy_extras.nodes_model_advanced", "ModelSamplingFlux")
    return run_node(node, model, 1.5, 0.5, 256, 256)


@row("ModelSamplingFlux before or after DyPE", "same result either order; the schedule follows the shifted sigmas")
def row_model_sampling_order(lab: Lab) -> None:
    before = dype(_model_sampling_flux(lab.model))
    after = _model_sampling_flux(dype(lab.model))
    with capture(before) as (clone, calls):
        out_before = lab.sample(clone)
    assert torch.equal(out_before, lab.sample(after))
    assert_tables_follow_the_schedule(calls)


@row("ModelSamplingSD3 (timestep multiplier 1000) on the model",
     "the schedule reads sigma, not the ×1000 timestep the transformer gets")
def row_timestep_multiplier(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_model_advanced", "ModelSamplingSD3")
    model = run_node(node, dype(lab.model), 3.0)
    assert model.get_model_object("model_sampling").multiplier == 1000
    with capture(model) as (clone, calls):
        lab.sample(clone)
    assert all((c.sigma <= 1).all() for c in calls)
    assert_tables_follow_the_schedule(calls)


@row("LoRA-style weight patch before or after DyPE", "same result either order; differs from DyPE alone")
def row_lora(lab: Lab) -> None:
    key = "diffusion_model.img_in.weight"
    delta = torch.randn(lab.model.model.state_dict()[key].shape, generator=torch.Generator().manual_seed(9)) * 0.1

    def lora(model):
        clone = model.clone()
        clone.add_patches({key: (delta,)}, 1.0)
        return clone

    a, b = lab.sample(dype(lora(lab.model)), cfg=1.0), lab.sample(lora(dype(lab.model)), cfg=1.0)
    assert torch.equal(a, b) and not torch.equal(a, lab.sample(dype(lab.model), cfg=1.0))


@row("custom guider (CFGGuider.sample, as SamplerCustomAdvanced drives it) at cfg 1 and 2",
     "each model call gets the schedule")
def row_guiders(lab: Lab) -> None:
    import comfy.samplers

    model = dype(lab.model)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 2)
    noise = torch.randn(1, 16, *HW, generator=torch.Generator().manual_seed(0))
    for cfg in (1.0, 2.0):
        with capture(model) as (clone, calls):
            guider = comfy.samplers.CFGGuider(clone)
            guider.set_conds(lab.fam.cond(7, 1), lab.fam.cond(7, 2))
            guider.set_cfg(cfg)
            out = guider.sample(noise, torch.zeros_like(noise), comfy.samplers.sampler_object("euler"), sigmas,
                                disable_pbar=True, seed=0)
        assert torch.isfinite(out).all()
        assert_tables_follow_the_schedule(calls)


def _cache_row(node_name: str):
    def check(lab: Lab) -> None:
        node = comfy_node("comfy_extras.nodes_easycache", f"{node_name}Node")
        if node is None:
            pytest.skip(f"{node_name} is not in this ComfyUI")
        both = [run_node(node, dype(lab.model), 3.0, 0.0, 1.0, False),
                dype(run_node(node, lab.model, 3.0, 0.0, 1.0, False))]
        outs = [lab.sample(model, steps=3, cfg=1.0) for model in both]
        assert all(torch.isfinite(o).all() for o in outs) and torch.equal(outs[0], outs[1])

    check.__name__ = f"row_{node_name.lower()}"
    return check


row("EasyCache before or after DyPE", "finite, same result either order (skipped where the host lacks it)")(
    _cache_row("EasyCache"))
row("LazyCache before or after DyPE", "finite, same result either order (skipped where the host lacks it)")(
    _cache_row("LazyCache"))


@row("TorchCompileModel after DyPE", "its wrapper and our object patch and wrappers coexist (compiling itself is "
     "not run: minutes on CI CPUs)")
def row_torch_compile(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_torch_compile", "TorchCompileModel")
    if node is None:
        pytest.skip("TorchCompileModel is not in this ComfyUI")
    config = _pack("nodes.rope_patch.config")
    compiled = run_node(node, dype(lab.model), "inductor")
    embedder_cls = _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder
    assert isinstance(compiled.get_model_object("diffusion_model.pe_embedder"), embedder_cls)
    assert compiled.get_wrappers("apply_model", config.WRAPPER_KEY)
    assert len(compiled.get_all_wrappers("apply_model")) >= 2


@row("ScaleROPE (scale 2, shift 1 on x) before DyPE", "DyPE builds its table on ScaleROPE's positions")
def row_scale_rope(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_rope", "ScaleROPE")
    if node is None:
        pytest.skip("ScaleROPE is not in this ComfyUI")
    scaled = run_node(node, lab.model, 2.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    with capture(dype(scaled)) as (clone, calls):
        lab.sample(clone, steps=1)
    ids = calls[0].tables[0][0]
    assert ids[..., 2].max() > 7  # ScaleROPE really moved the positions...
    assert_tables_follow_the_schedule(calls)  # ...and our schedule (from the latent's grid) applies to them


@row("Kontext reference latents (Flux)",
     "references join the sequence but never inflate the scale (it comes from the generated latent)")
def row_reference_latents(lab: Lab) -> None:
    positive = lab.fam.cond(7, 1, reference_latents=[torch.randn(1, 16, 40, 40)])
    with capture(dype(lab.model)) as (clone, calls):
        lab.sample(clone, steps=1, positive=positive)
    assert calls[0].tables[0][0].shape[1] > 7 + 64
    assert_tables_follow_the_schedule(calls)


@row("Qwen-Edit reference latents", "as Kontext: the scale comes from the generated latent", family="qwen_image")
def row_qwen_edit_reference(lab: Lab) -> None:
    positive = lab.fam.cond(7, 1, reference_latents=[torch.randn(1, 16, 1, 40, 40)])
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, steps=1, positive=positive)
    assert torch.isfinite(out).all() and calls[0].tables[0][0].shape[1] > 7 + 64
