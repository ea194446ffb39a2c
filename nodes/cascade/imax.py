"""I-Max's rule in the cascade room (arXiv 2410.07536; official code PRIS-CV/I-Max at 3b38c11): each stage samples
its own schedule from pure noise at the larger size, and at each step pulls the model's velocity toward the
velocity that leads straight to the guide (the previous result, decoded, upsampled and encoded again: the
"projected flow"), on the low frequencies of a Haar split, with a weight that follows the guidance schedule
(spectral/imax.py). The official stage model (NTK with its clip, proportional attention, text duplication) is
imax_model.py. docs/imax.md.
"""

from __future__ import annotations

import torch

from ...spectral import hiflow as hf
from ...spectral import imax as im
from ..families import FamilyAdapter
from .imax_model import imax_stage_model
from .imax_settings import NODE, ImaxSettings
from .method import StageContext, StagePlan
from .schedule import model_sigmas
from .upscale import upscaled_latent


def imax_sigmas(model, steps: int, shift: float) -> torch.Tensor:
    """linspace(1, 1/steps, steps) through the static shift ``shift`` (the official run with diffusers 0.30 /
    0.31, docs/imax.md), or through the MODEL's own shift where ``shift`` is 0; then 0. float32."""
    sigmas = hf.static_sigmas(steps, shift) if shift > 0 else model_sigmas(model, steps)
    return sigmas.float()


class ImaxStep:
    """One stage's official steps: swin pad / crop of the latent and the guide, the projected flow toward the guide,
    its low frequencies (Haar, ``level``) pulled in by the schedule's weight, Euler."""

    def __init__(self, guide: torch.Tensor, steps: int, schedule: str, level: int, swin: bool) -> None:
        self.guide, self.steps, self.schedule, self.level, self.swin = guide, steps, schedule, level, swin
        self.grid: torch.Size | None = None

    def prepare(self, x: torch.Tensor, step: int) -> torch.Tensor:
        if self.grid is None:
            self.grid = x.shape
            self.guide = self.guide.to(device=x.device, dtype=torch.float32)
        return hf.swin_step(x, step) if self.swin else x

    def step(self, x: torch.Tensor, denoised: torch.Tensor, step: int, sigma: torch.Tensor,
             sigma_next: torch.Tensor) -> torch.Tensor:
        velocity = (x - denoised) / sigma  # the model's flow velocity (ComfyUI's x0 = x - σ·v)
        target = im.projected_velocity(x, im.pad_like(self.guide, x), sigma)
        velocity = im.project(velocity, target, im.guidance_weight(step, self.steps), self.schedule, self.level)
        return (x + (sigma_next - sigma) * velocity).to(denoised.dtype)

    def finish(self, x: torch.Tensor) -> torch.Tensor:
        """An odd step count ends padded: back to the stage's size (docs/imax.md)."""
        return hf.swin_crop(x) if self.grid is not None and x.shape != self.grid else x


class ImaxMethod:
    keeps_predictions = False
    node = NODE

    def __init__(self, settings: ImaxSettings) -> None:
        self.settings = settings

    def base_sigmas(self, model, adapter: FamilyAdapter, samples: torch.Tensor) -> torch.Tensor:
        return imax_sigmas(model, self.settings.steps, self.settings.base_shift)

    def first_read(self, index: int) -> None:
        return None

    def stage(self, context: StageContext) -> StagePlan:
        s, index = self.settings, context.index
        guide = upscaled_latent(context.vae, context.previous, context.grid, NODE)
        model = context.stage_model or imax_stage_model(context.model, context.adapter, s.ntk_factor[index],
                                                        s.proportional_attention, s.text_duplication)
        rule = ImaxStep(context.model.model.process_latent_in(guide), s.stage_steps[index], s.guidance_schedule,
                        s.wavelet_level, s.swin)
        return StagePlan(model=model, sigmas=imax_sigmas(context.model, s.stage_steps[index], s.stage_shift[index]),
                         start=torch.zeros_like(guide), rule=rule, guidance=s.stage_guidance[index],
                         seed=hf.stage_seed(context.seed, index + 1))
