"""The room of guided cascades: a base pass at the input latent's size, then stages at larger sizes, each a
``comfy.sample.sample_custom`` run whose steps follow the base run under a method's rule (method.py; HiFlow in
hiflow.py, I-Max in imax.py).

All run state (the stored predictions, the plans) is local to one call of ``run_passes``: an interrupt or an
error drops it with the call, and the MODELs are never changed (every official stage model is a clone).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from ..families import FamilyAdapter
from ..families.base import distilled_guidance
from ..inputs.cascade import SEED
from ..rope_patch.prefix_cache import cascade_pass_model
from .connections import check_conditioning, check_vae, latent_samples
from .families import cascade_family, latent_compression
from .method import CascadeMethod, StageContext
from .predictions import Predictions
from .sampling import base_sampler, stage_sampler

logger = logging.getLogger(__name__)


@dataclass
class CascadeResult:
    latent: dict  # the last stage's LATENT
    stages: list[dict]  # the base pass's LATENT, then each stage's
    stored_bytes: int  # the most host memory the stored predictions held at once


def stage_grid(latent: torch.Tensor, scale: float, adapter: FamilyAdapter) -> tuple[int, int]:
    """The stage's latent rows and columns: the input latent's x ``scale``, rounded to whole tokens."""
    patch = adapter.patch_size
    return tuple(max(patch, round(n * scale / patch) * patch) for n in latent.shape[-2:])


def stage_grids(samples: torch.Tensor, scales: tuple[float, ...], adapter: FamilyAdapter,
                node: str) -> list[tuple[int, int]]:
    """Every stage's grid, each larger than the one before it in rows and columns (whole tokens), or one error
    naming 'scales': the settings know the scales but not the latent they multiply."""
    grids, previous = [], tuple(samples.shape[-2:])
    for index, scale in enumerate(scales):
        grid = stage_grid(samples, scale, adapter)
        if grid[0] <= previous[0] or grid[1] <= previous[1]:
            raise ValueError(f"{node}: 'scales' entry {scale:g} gives stage {index + 1} a {grid[0]} x {grid[1]} latent, "
                             f"not larger than the {previous[0]} x {previous[1]} before it (stages grow by whole tokens "
                             f"of {adapter.patch_size} latent pixels); raise it.")
        grids.append(grid)
        previous = grid
    return grids


def with_guidance(conditioning, guidance: float, model):
    """The conditioning with the stage's distilled guidance, for models that take one (FLUX.1 / Flux.2 dev,
    Nunchaku's FLUX.1-dev)."""
    if guidance <= 0 or not distilled_guidance(model.model):
        return conditioning
    import node_helpers

    return node_helpers.conditioning_set_values(conditioning, {"guidance": guidance})


def _still_read(method: CascadeMethod, after: int) -> int | None:
    """The lowest base index a stage after ``after`` reads (None: none does)."""
    reads = [method.first_read(j) for j in range(after + 1, len(method.settings.scales))]
    reads = [r for r in reads if r is not None]
    return min(reads) if reads else None


def run_passes(method: CascadeMethod, model, positive, negative, vae, latent: dict, seed: int, stage_model=None,
               disable_pbar: bool = True, callbacks=None) -> CascadeResult:
    """Prompt -> high resolution (an empty latent, denoise 1) or image -> high resolution (an encoded image,
    denoise < 1: the base pass is img2img on the last steps of its schedule)."""
    import comfy.sample

    node, settings = method.node, method.settings
    seed = SEED.check(seed, node)
    adapter = cascade_family(model, node)
    if stage_model is not None and cascade_family(stage_model, node, "stage_model").name != adapter.name:
        raise ValueError(f"{node}: 'stage_model' is {type(stage_model.model).__name__}, 'model' "
                         f"{type(model.model).__name__}; the stages must run the same family as the base pass.")
    check_conditioning(positive, negative, node)
    samples = latent_samples(model, latent, node)
    check_vae(vae, model, samples, node, latent_compression(adapter))
    grids = stage_grids(samples, settings.scales, adapter, node)
    sigmas = method.base_sigmas(model, adapter, samples)
    first = settings.steps - settings.base_steps_run
    predictions = Predictions() if method.keeps_predictions else None
    callback = callbacks(model, settings.base_steps_run) if callbacks else None
    noise = comfy.sample.prepare_noise(samples, seed)
    out = comfy.sample.sample_custom(cascade_pass_model(model, adapter, node, warn=True), noise, settings.cfg,
                                     base_sampler(first, predictions), sigmas[first:],
                                     positive, negative, samples, callback=callback, disable_pbar=disable_pbar,
                                     seed=seed)
    stages = [{"samples": out}]
    for index, grid in enumerate(grids):
        if predictions is not None:
            predictions.keep_from(min(r for r in (method.first_read(index), _still_read(method, index), 10**9)
                                      if r is not None))
        plan = method.stage(StageContext(index=index, grid=grid, model=model, adapter=adapter, vae=vae, previous=out,
                                         base_sigmas=sigmas, predictions=predictions, seed=seed,
                                         stage_model=stage_model))
        noise = comfy.sample.prepare_noise(plan.start, plan.seed)
        callback = callbacks(plan.model, len(plan.sigmas) - 1) if callbacks else None
        out = comfy.sample.sample_custom(cascade_pass_model(plan.model, adapter, node), noise, settings.cfg,
                                         stage_sampler(plan.rule, index),
                                         plan.sigmas, with_guidance(positive, plan.guidance, model),
                                         with_guidance(negative, plan.guidance, model), plan.start,
                                         callback=callback, disable_pbar=disable_pbar, seed=plan.seed)
        stages.append({"samples": out})
        logger.debug("%s stage %d: %s latent, %d steps", node, index + 1, tuple(out.shape), len(plan.sigmas) - 1)
    stored = predictions.peak_bytes if predictions is not None else 0
    return CascadeResult(latent={"samples": out}, stages=stages, stored_bytes=stored)
