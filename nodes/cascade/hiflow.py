"""HiFlow's rule in the cascade room (arXiv 2504.06232; official code Bujiazi/HiFlow at da351a8): each stage starts
from the previous result, upsampled and sharpened, re-noised to the first of the last N timesteps of the base
schedule, and at each step pulls its x0 toward the latest prediction the run made at that timestep (the one store,
predictions.py) and its velocity change toward that prediction's (spectral/hiflow.py). docs/hiflow.md.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ...spectral import hiflow as hf
from ..families import FamilyAdapter
from .hiflow_model import official_stage_model
from .method import StageContext, StagePlan
from .predictions import Predictions
from .schedule import base_schedule
from .settings import HiFlowSettings
from .upscale import upscaled_latent


class HiFlowStep:
    """One stage's official steps (``flowmatch_step``): swin pad / crop, structure alignment of x0 toward the
    reference's low frequencies, acceleration alignment of the velocity, Euler. ``record``: keep this stage's own
    (unaligned) x0 for the stages after it, at the same indices, as the official store does."""

    def __init__(self, predictions: Predictions, offset: int, steps: int, alpha: float, beta: float, ratio: float,
                 swin: bool, record: bool) -> None:
        self.predictions, self.offset, self.steps = predictions, offset, steps
        self.alpha, self.beta, self.ratio, self.swin, self.record = alpha, beta, ratio, swin, record
        self.grid: torch.Size | None = None
        self.masks: dict[tuple[int, int], torch.Tensor] = {}
        self.v_prev = self.v_ref_prev = None

    def prepare(self, x: torch.Tensor, step: int) -> torch.Tensor:
        if self.grid is None:
            self.grid = x.shape
        return hf.swin_step(x, step) if self.swin else x

    def step(self, x: torch.Tensor, denoised: torch.Tensor, step: int, sigma: torch.Tensor,
             sigma_next: torch.Tensor) -> torch.Tensor:
        index = self.offset + step
        x0_ref = hf.resize_like(self.predictions.latest(index, x.device), x)  # read before this stage writes it
        if self.record:
            self.predictions.keep(index, denoised)  # unaligned, as the official stores it
        alpha, beta = hf.stage_weights(self.alpha, self.beta, self.steps, step)
        hw = (x.shape[-2], x.shape[-1])
        if hw not in self.masks:
            self.masks[hw] = hf.butterworth_mask(*hw, self.ratio, device=x.device)
        v = hf.velocity(x, hf.align_structure(denoised, x0_ref, self.masks[hw], alpha), sigma)
        v_ref = hf.velocity(x, x0_ref, sigma)
        if self.v_prev is not None:
            v = hf.align_acceleration(v, v_ref, hf.match_grid(self.v_prev, x), hf.match_grid(self.v_ref_prev, x),
                                      beta)
        self.v_prev, self.v_ref_prev = v, v_ref
        return (x + (sigma_next - sigma) * v).to(denoised.dtype)

    def finish(self, x: torch.Tensor) -> torch.Tensor:
        """An odd step count ends padded: back to the stage's size (docs/hiflow.md)."""
        return hf.swin_crop(x) if self.grid is not None and x.shape != self.grid else x


#: A stage model by stage: what the room knows when the stage begins (its index, grid, the base MODEL and its family,
#: ...) -> the MODEL the stage samples.
StageModels = Callable[[StageContext], object]


class HiFlowMethod:
    """HiFlow in the room. ``stage_models`` replaces the official stage model per stage (HRDiT's: NTK per stage
    plus SPA and HAP) and decides what the node's 'stage_model' input (``context.stage_model``) becomes; without
    it, that input, when connected, wins over the official stage model."""

    keeps_predictions = True

    def __init__(self, settings: HiFlowSettings, stage_models: StageModels | None = None) -> None:
        self.settings, self.stage_models, self.node = settings, stage_models, settings.node

    def base_sigmas(self, model, adapter: FamilyAdapter, samples: torch.Tensor) -> torch.Tensor:
        return base_schedule(model, adapter, self.settings.steps, samples, self.settings.schedule)

    def first_read(self, index: int) -> int:
        return self.settings.steps - self.settings.stage_steps[index]

    def stage_model(self, context: StageContext):
        """The MODEL stage ``context.index`` samples."""
        if self.stage_models is not None:
            return self.stage_models(context)
        if context.stage_model is not None:
            return context.stage_model
        s = self.settings
        return official_stage_model(context.model, context.adapter, s.ntk_factor[context.index],
                                    s.proportional_attention, self.node)

    def stage(self, context: StageContext) -> StagePlan:
        s, index = self.settings, context.index
        steps = s.stage_steps[index]
        start = upscaled_latent(context.vae, context.previous, context.grid, self.node, s.sharpen,
                                hf.blur_width(context.seed, index))
        rule = HiFlowStep(context.predictions, self.first_read(index), steps, s.alphas[index], s.betas[index],
                          s.filter_ratio[index], s.swin, record=index < len(s.scales) - 1)
        return StagePlan(model=self.stage_model(context),
                         sigmas=hf.stage_sigmas(context.base_sigmas, steps), start=start, rule=rule,
                         guidance=s.stage_guidance[index], seed=hf.stage_seed(context.seed, index + 1))
