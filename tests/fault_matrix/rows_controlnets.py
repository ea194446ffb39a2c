"""Fault matrix rows: controlNets with their own RoPE (Flux, Qwen-Image) above and at the trained size."""

from __future__ import annotations

import pytest
import tiny_configs
import tiny_models
import torch
from capture import capture
from patching import BASE_PX, _pack, expected_table

from .lab import (
    HW,
    Lab,
    comfy_node,
    dype,
    row,
    sample_with,
)


def tiny_flux_controlnet():
    import comfy.controlnet
    import comfy.ops
    from comfy.ldm.flux.controlnet import ControlNetFlux

    config = {k: v for k, v in tiny_models.host_unet_config(tiny_configs.FLUX_CONFIG).items() if k != "image_model"}
    model = ControlNetFlux(operations=comfy.ops.disable_weight_init, dtype=torch.float32, **config)
    tiny_models._randomize(model, 7)
    return comfy.controlnet.ControlNet(model, load_device=torch.device("cpu"), extra_conds=["y", "guidance"])


def tiny_qwen_controlnet():
    import comfy.controlnet
    import comfy.latent_formats
    import comfy.ops

    module = comfy_node("comfy.ldm.qwen_image.controlnet", "QwenImageControlNetModel")
    if module is None:
        pytest.skip("this ComfyUI has no Qwen-Image ControlNet")
    config = {k: v for k, v in tiny_models.host_unet_config(tiny_configs.QWEN_CONFIG).items() if k != "image_model"}
    model = module(operations=comfy.ops.disable_weight_init, dtype=torch.float32, **config)
    tiny_models._randomize(model, 7)
    return comfy.controlnet.ControlNet(model, compression_ratio=1, latent_format=comfy.latent_formats.Wan21(),
                                       load_device=torch.device("cpu"), extra_conds=[])


def apply_controlnet(positive, negative, control_net, hw, family="flux"):
    """As the ControlNetApplyAdvanced node does (its own class, its own code path)."""
    import nodes

    vae = None
    if family == "qwen_image":  # Qwen-Image ControlNets take a VAE-encoded hint
        from headless import tiny_pack

        vae = tiny_pack.build_vae("qwen_image")
    image = torch.rand(1, hw[0] * 8, hw[1] * 8, 3, generator=torch.Generator().manual_seed(4))
    return nodes.ControlNetApplyAdvanced().apply_controlnet(positive, negative, control_net, image, 1.0, 0.0, 1.0,
                                                            vae=vae)


@row("Flux ControlNet (ControlNetFlux via ControlNetApplyAdvanced) above the trained size",
     "the ControlNet gets the same per-call schedule as the model; its embedder is restored after the run")
def row_flux_controlnet(lab: Lab) -> None:
    _controlnet_follows_the_schedule(lab, tiny_flux_controlnet(), HW)


def _controlnet_follows_the_schedule(lab: Lab, control_net, hw) -> None:
    embedder_cls = _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder
    control_model = control_net.control_model
    original = control_model.pe_embedder
    positive, negative = apply_controlnet(lab.fam.cond(7, 1), lab.fam.cond(7, 2), control_net, hw, lab.family)
    control_tables, stock_tables = [], []

    def record(module, inputs, output):
        if isinstance(module, embedder_cls) and module.original is original:
            control_tables.append((inputs[0].clone(), output.clone()))

    global_hook = torch.nn.modules.module.register_module_forward_hook(record)
    stock_hook = original.register_forward_hook(lambda m, i, o: stock_tables.append(o))
    try:
        with capture(dype(lab.model)) as (clone, calls):
            out = sample_with(clone, lab.family, hw, steps=1, positive=positive, negative=negative)
    finally:
        global_hook.remove()
        stock_hook.remove()
    assert torch.isfinite(out).all() and len(calls) == 1
    assert len(control_tables) == len(calls) and not stock_tables  # the ControlNet never used stock RoPE
    grid = tuple(n // 2 for n in hw)
    for (ids, pe), call in zip(control_tables, calls, strict=True):
        assert torch.equal(pe, expected_table(ids, call.sigma, grid, BASE_PX / 16))
    assert control_model.pe_embedder is original and "forward" not in control_model.__dict__
    # The same ControlNet on the unpatched model right after: stock RoPE, nothing of ours on it.
    stock_hook = original.register_forward_hook(lambda m, i, o: stock_tables.append(o))
    try:
        lab.sample(lab.model, hw, steps=1, positive=positive, negative=negative)
    finally:
        stock_hook.remove()
    assert stock_tables and control_model.pe_embedder is original


@row("Qwen-Image ControlNet (QwenImageControlNetModel via ControlNetApplyAdvanced, VAE-encoded hint) above the "
     "trained size", "as for Flux: the same per-call schedule as the model, restored after the run",
     family="qwen_image")
def row_qwen_controlnet(lab: Lab) -> None:
    _controlnet_follows_the_schedule(lab, tiny_qwen_controlnet(), HW)


@row("Flux ControlNet at or below the trained size", "bit-identical to the unpatched model with the same ControlNet")
def row_flux_controlnet_at_base(lab: Lab) -> None:
    control_net = tiny_flux_controlnet()
    positive, negative = apply_controlnet(lab.fam.cond(7, 1), lab.fam.cond(7, 2), control_net, HW)
    plain = sample_with(lab.model, "flux", steps=1, positive=positive, negative=negative)
    patched = sample_with(dype(lab.model, base_px=0), "flux", steps=1, positive=positive, negative=negative)
    assert torch.equal(plain, patched)
