"""Fault matrix rows: tables under autograd (grad mode, gradient guidance) and ids that move between calls."""

from __future__ import annotations

import torch
from capture import capture
from patching import BASE_TOKENS, expected_table

from .lab import (
    Lab,
    dype,
    row,
    sample_with,
    sega,
)

GRID_HW = (64, 48)  # 32 x 24 tokens: above the trained grid on both axes


def tables_are_the_formula(calls, grid) -> None:
    """Every table of every captured call is rope/'s formula for that call's own ids and sigma (DyPE's yarn)."""
    assert calls
    for call in calls:
        for ids, pe in call.tables:
            assert torch.equal(pe, expected_table(ids, call.sigma, grid, BASE_TOKENS))


@row("SEGA with uni_pc / uni_pc_bh2 under grad mode (a script calling comfy.sample; 0.3.75 runs uni_pc outside "
     "no_grad, so the latent requires grad after the first step)",
     "runs; the result is the same run's without grad mode, bit for bit")
def row_uni_pc_with_grad(lab: Lab) -> None:
    model = sega(dype(lab.model))
    for sampler in ("uni_pc", "uni_pc_bh2"):
        with torch.enable_grad():
            with_grad = sample_with(model, "flux", GRID_HW, steps=3, cfg=1.0, sampler=sampler)
        with torch.no_grad():
            without = sample_with(model, "flux", GRID_HW, steps=3, cfg=1.0, sampler=sampler)
        assert torch.equal(with_grad.detach(), without) and torch.isfinite(without).all()


def sample_gradient_guided(model, x, sigmas, extra_args=None, callback=None, disable=None):
    """A gradient-guidance sampler as guidance nodes write one: under grad mode, with the latent requiring grad on
    purpose, the model's forward is recorded for autograd and each denoised estimate is moved down the gradient of a
    guidance loss with respect to the latent. The loss here is of the latent alone: ComfyUI's Flux itself cannot be
    differentiated (in-place adds on 0.3.75; comfy-kitchen's apply_rope has no autograd formula on 0.30), stock or
    patched; the gradient through our tables is checked in tests/test_embedder_tables.py."""
    extra_args = extra_args or {}
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        with torch.enable_grad():
            x_in = x.detach().requires_grad_(True)
            denoised = model(x_in, sigmas[i] * s_in, **extra_args)
            assert denoised.requires_grad  # the forward was recorded: every table of it saw grad mode
            (grad,) = torch.autograd.grad((x_in - denoised.detach()).square().mean(), x_in)
        denoised = denoised.detach() - 0.5 * grad
        x = x + (x - denoised) / sigmas[i] * (sigmas[i + 1] - sigmas[i])
    return x


@row("a gradient-guidance sampler (grad mode, the latent requires grad on purpose), DyPE and DyPE + SEGA (each "
     "recipe)",
     "runs; every table is the formula's for its call (DyPE); under refined the temperatures carry that latent's "
     "gradient, the reference recipes paper and port compute their spectrum without one (both codes do)")
def row_gradient_guidance(lab: Lab) -> None:
    import comfy.sample
    import comfy.samplers

    sampler = comfy.samplers.KSAMPLER(sample_gradient_guided)
    latent = lab.fam.latent(1, *GRID_HW)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    sigmas = comfy.samplers.calculate_sigmas(lab.model.get_model_object("model_sampling"), "simple", 3)

    def run(model):
        return comfy.sample.sample_custom(model, noise, 1.0, sampler, sigmas, lab.fam.cond(7, 1), lab.fam.cond(7, 2),
                                          latent, disable_pbar=True, seed=0)

    with capture(dype(lab.model)) as (model, calls):
        assert torch.isfinite(run(model)).all()
    tables_are_the_formula(calls, (32, 24))
    for recipe in ("refined (ours)", "paper (official SEGA code)", "diffusers port"):
        assert torch.isfinite(run(sega(dype(lab.model), recipe=recipe))).all(), recipe


class ShiftFromSecondCall:
    """A DIFFUSION_MODEL wrapper standing for a node that moves positions differently from call to call: Flux's
    ``rope_options`` shift_y = 500 from its second call on (``calls`` = 0 starts over)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, executor, x, timestep, context, y, guidance, ref_latents, control, transformer_options,
                 **kwargs):
        self.calls += 1
        if self.calls > 1:
            transformer_options = {**transformer_options, "rope_options": {"shift_y": 500.0}}
        return executor(x, timestep, context, y, guidance, ref_latents, control, transformer_options, **kwargs)


def moving_ids(model) -> tuple:
    import comfy.patcher_extension as ext

    mover = ShiftFromSecondCall()
    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_move", mover)
    return clone, mover


@row("a node moving RoPE positions differently from call to call (a DIFFUSION_MODEL wrapper: rope_options shift_y "
     "500 from its second call on)",
     "every table is the formula's for that call's own ids, bit for bit: the pack builds each table from its ids")
def row_moving_ids(lab: Lab) -> None:
    model, mover = moving_ids(dype(lab.model))
    with capture(model) as (clone, calls):
        out = sample_with(clone, "flux", GRID_HW, steps=3, cfg=1.0)
    assert torch.isfinite(out).all() and mover.calls == 3
    assert not torch.equal(calls[0].tables[0][0], calls[1].tables[0][0])  # the premise: the ids moved
    tables_are_the_formula(calls, (32, 24))
