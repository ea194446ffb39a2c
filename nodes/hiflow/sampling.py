"""The two ComfyUI samplers of a cascade (``comfy.samplers.KSAMPLER`` around a sample function of ours).

Both call the model only through the guided denoiser ComfyUI hands a sampler (CFG, conditioning, ControlNet,
every wrapper of the MODEL), so the model's output is ComfyUI's x0 prediction (denoised). The base sampler is the
official Euler flow-matching loop and keeps each denoised on the CPU; the stage sampler is the official stage step:
swin pad/crop, the model call, structure alignment of x0, acceleration alignment of the velocity, Euler update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...spectral import hiflow as hf


@dataclass
class Trajectory:
    """x0 predictions by their index in the base schedule, on the CPU (float32): the next stage's reference."""

    x0: dict[int, torch.Tensor] = field(default_factory=dict)

    def keep(self, index: int, denoised: torch.Tensor) -> None:
        self.x0[index] = denoised.detach().to("cpu", torch.float32, copy=True)

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.x0.values())


@dataclass
class StagePlan:
    """One stage: where it starts in the base schedule, the previous stage's x0 and the official weights."""

    offset: int
    reference: dict[int, torch.Tensor]
    alpha: float
    beta: float
    ratio: float
    swin: bool = True
    record: Trajectory | None = None  # None for the last stage: nothing follows it


def _interrupted() -> None:
    import comfy.model_management

    comfy.model_management.throw_exception_if_processing_interrupted()


def _report(callback, i: int, x, sigma, denoised) -> None:
    if callback is not None:
        callback({"x": x, "i": i, "sigma": sigma, "sigma_hat": sigma, "denoised": denoised})


def base_sampler(offset: int, record: Trajectory):
    """Euler on the given sigmas (x + (σ' - σ)·v, v = (x - x0)/σ), keeping every x0 at ``offset + i``."""
    import comfy.samplers

    @torch.no_grad()
    def sample(model, x, sigmas, extra_args=None, callback=None, disable=None):
        extra_args = {} if extra_args is None else extra_args
        s_in = x.new_ones([x.shape[0]])
        for i in range(len(sigmas) - 1):
            _interrupted()
            denoised = model(x, sigmas[i] * s_in, **extra_args)
            record.keep(offset + i, denoised)
            _report(callback, i, x, sigmas[i], denoised)
            x = x + (sigmas[i + 1] - sigmas[i]) * ((x - denoised) / sigmas[i])
        return x

    return comfy.samplers.KSAMPLER(sample)


def stage_sampler(plan: StagePlan):
    """The official stage loop on the given sigmas (the tail of the base schedule)."""
    import comfy.samplers

    @torch.no_grad()
    def sample(model, x, sigmas, extra_args=None, callback=None, disable=None):
        extra_args = {} if extra_args is None else extra_args
        s_in = x.new_ones([x.shape[0]])
        grid = x.shape
        steps = len(sigmas) - 1
        masks: dict[tuple[int, int], torch.Tensor] = {}
        v_prev = v_ref_prev = None
        for i in range(steps):
            _interrupted()
            if plan.swin:
                x = hf.swin_step(x, i)
            sigma = sigmas[i]
            denoised = model(x, sigma * s_in, **extra_args)
            if plan.record is not None:
                plan.record.keep(plan.offset + i, denoised)  # unaligned, as the official stores it
            x0_ref = hf.resize_like(plan.reference[plan.offset + i].to(x.device), x)
            alpha, beta = hf.stage_weights(plan.alpha, plan.beta, steps, i)
            hw = (x.shape[-2], x.shape[-1])
            if hw not in masks:
                masks[hw] = hf.butterworth_mask(*hw, plan.ratio, device=x.device)
            v = hf.velocity(x, hf.align_structure(denoised, x0_ref, masks[hw], alpha), sigma)
            v_ref = hf.velocity(x, x0_ref, sigma)
            if v_prev is not None:
                v = hf.align_acceleration(v, v_ref, hf.match_grid(v_prev, x), hf.match_grid(v_ref_prev, x), beta)
            v_prev, v_ref_prev = v, v_ref
            _report(callback, i, x, sigma, denoised)
            x = (x + (sigmas[i + 1] - sigma) * v).to(denoised.dtype)
        if x.shape != grid:  # an odd step count ends padded: back to the stage's size (docs/hiflow.md)
            x = hf.swin_crop(x)
        return x

    return comfy.samplers.KSAMPLER(sample)
