"""The cascade's base schedule, computed here from the chosen rule; the MODEL's ``model_sampling`` is only read.

Every pass (the base and each stage's tail) runs these sigmas through ComfyUI's sampler, so the model receives
``model_sampling.timestep(σ)`` as always (FLUX: σ itself; the official transformer receives timestep / 1000 = σ).
"""

from __future__ import annotations

import torch

from ...spectral import hiflow as hf
from ..families import FamilyAdapter
from ..families.base import distilled_guidance
from ..inputs.cascade import OFFICIAL_SHIFT, SCHEDULE, STATIC_SHIFT_3
from .families import FLUX1_FAMILIES
from .settings import NODE


def model_sigmas(model, steps: int) -> torch.Tensor:
    """The official grid through this MODEL's own shift (``model_sampling.percent_to_sigma``), then 0."""
    sampling = model.get_model_object("model_sampling")
    return torch.tensor([float(sampling.percent_to_sigma(1.0 - float(t))) for t in hf.schedule_times(steps)] + [0.0],
                        dtype=torch.float64)


def has_official_schedule(model, adapter: FamilyAdapter) -> bool:
    """The official code is a FLUX.1-dev pipeline: FLUX.1 (Nunchaku's too) with a guidance input. Other families
    have none."""
    return adapter.name in FLUX1_FAMILIES and distilled_guidance(model.model)


def base_schedule(model, adapter: FamilyAdapter, steps: int, latent: torch.Tensor,
                  schedule: str = OFFICIAL_SHIFT) -> torch.Tensor:
    """The base pass's sigmas (float32, ending in 0) under ``schedule``.

    official: FLUX.1-dev's dynamic shift at the base latent's image tokens (1024²: mu = 1.15, the same σ as
    ComfyUI's FLUX.1 ``model_sampling``); other families: their model's own shift (docs/hiflow.md).
    """
    SCHEDULE.check(schedule, NODE)
    if schedule == STATIC_SHIFT_3:
        sigmas = hf.static_sigmas(steps, 3.0)
    elif schedule == OFFICIAL_SHIFT and has_official_schedule(model, adapter):
        patch = adapter.patch_size
        tokens = (latent.shape[-2] // patch) * (latent.shape[-1] // patch)
        sigmas = hf.dynamic_sigmas(steps, hf.dynamic_mu(tokens))
    else:
        sigmas = model_sigmas(model, steps)
    return sigmas.float()
