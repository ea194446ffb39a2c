"""The two ComfyUI samplers of a cascade (``comfy.samplers.KSAMPLER`` around a sample function of ours).

Both call the model only through the guided denoiser ComfyUI hands a sampler (CFG, conditioning, ControlNet,
every wrapper of the MODEL), so the model's output is ComfyUI's x0 prediction (denoised). The base sampler is the
official Euler flow-matching loop and keeps each denoised in the run's store when the method reads them; the stage
sampler runs a method's step rule (method.py): prepare the latent (swin), call the model with the stage step in its
options (rope_patch/stage_step.py), and let the rule take the Euler step.
"""

from __future__ import annotations

import torch

from ..rope_patch.stage_step import StageStep, with_stage_step
from .method import StepRule
from .predictions import Predictions


def _interrupted() -> None:
    import comfy.model_management

    comfy.model_management.throw_exception_if_processing_interrupted()


def _report(callback, i: int, x, sigma, denoised) -> None:
    if callback is not None:
        callback({"x": x, "i": i, "sigma": sigma, "sigma_hat": sigma, "denoised": denoised})


def base_sampler(offset: int, predictions: Predictions | None):
    """Euler on the given sigmas (x + (σ' - σ)·v, v = (x - x0)/σ), keeping every x0 at ``offset + i``."""
    import comfy.samplers

    @torch.no_grad()
    def sample(model, x, sigmas, extra_args=None, callback=None, disable=None):
        extra_args = {} if extra_args is None else extra_args
        s_in = x.new_ones([x.shape[0]])
        for i in range(len(sigmas) - 1):
            _interrupted()
            denoised = model(x, sigmas[i] * s_in, **extra_args)
            if predictions is not None:
                predictions.keep(offset + i, denoised)
            _report(callback, i, x, sigmas[i], denoised)
            x = x + (sigmas[i + 1] - sigmas[i]) * ((x - denoised) / sigmas[i])
        return x

    return comfy.samplers.KSAMPLER(sample)


def stage_sampler(rule: StepRule, stage: int):
    """A method's stage loop on the given sigmas: ``rule`` prepares each step's latent and takes its step."""
    import comfy.samplers

    @torch.no_grad()
    def sample(model, x, sigmas, extra_args=None, callback=None, disable=None):
        extra_args = {} if extra_args is None else extra_args
        options = extra_args.get("model_options", {})
        s_in = x.new_ones([x.shape[0]])
        steps = len(sigmas) - 1
        for i in range(steps):
            _interrupted()
            x = rule.prepare(x, i)
            sigma = sigmas[i]
            told = {**extra_args, "model_options": with_stage_step(options, StageStep(stage, i, steps, sigma))}
            denoised = model(x, sigma * s_in, **told)
            _report(callback, i, x, sigma, denoised)
            x = rule.step(x, denoised, i, sigma, sigmas[i + 1])
        return rule.finish(x)

    return comfy.samplers.KSAMPLER(sample)
