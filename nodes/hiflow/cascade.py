"""One HiFlow cascade through ComfyUI: the base pass, then each stage as ``comfy.sample.sample_custom`` with the
tail of the base schedule, the stage's own noise and the previous stage's image, upsampled and sharpened.

All run state (the stored predictions, the plans) is local to one call of ``run_cascade``: an interrupt or an
error drops it with the call, and the MODELs are never changed (the official stage model is a clone).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...spectral import hiflow as hf
from ..families import FamilyAdapter
from ..families.base import params_attr
from ..inputs.cascade import SEED
from .connections import check_conditioning, check_vae, decoded_images, latent_samples
from .families import hiflow_family
from .sampling import StagePlan, Trajectory, base_sampler, stage_sampler
from .schedule import base_schedule
from .settings import NODE, HiFlowSettings
from .stage_model import official_stage_model

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


def stage_grids(samples: torch.Tensor, scales: tuple[float, ...], adapter: FamilyAdapter) -> list[tuple[int, int]]:
    """Every stage's grid, each larger than the one before it in rows and columns (whole tokens), or one error
    naming 'scales': the settings know the scales but not the latent they multiply."""
    grids, previous = [], tuple(samples.shape[-2:])
    for index, scale in enumerate(scales):
        grid = stage_grid(samples, scale, adapter)
        if grid[0] <= previous[0] or grid[1] <= previous[1]:
            raise ValueError(f"{NODE}: 'scales' entry {scale:g} gives stage {index + 1} a {grid[0]} x {grid[1]} latent, "
                             f"not larger than the {previous[0]} x {previous[1]} before it (stages grow by whole tokens "
                             f"of {adapter.patch_size} latent pixels); raise it.")
        grids.append(grid)
        previous = grid
    return grids


def _with_guidance(conditioning, guidance: float, model):
    """The conditioning with the stage's distilled guidance, for models that take one (FLUX.1 / Flux.2 dev)."""
    if guidance <= 0 or not params_attr(model.model, "guidance_embed", False):
        return conditioning
    import node_helpers

    return node_helpers.conditioning_set_values(conditioning, {"guidance": guidance})


@torch.no_grad()
def upscaled_start(vae, samples: torch.Tensor, grid: tuple[int, int], sharpen: float,
                   blur_width: float) -> torch.Tensor:
    """The stage's x0 before noise: decode, bicubic to the stage's pixels, sharpen, encode (the VAE's mode)."""
    images = decoded_images(vae, samples)[..., :3].movedim(-1, 1).float()
    ratio = images.shape[-2] // samples.shape[-2]
    images = F.interpolate(images, size=(grid[0] * ratio, grid[1] * ratio), mode="bicubic", align_corners=False)
    images = hf.sharpen(images, blur_width, sharpen)
    encoded = vae.encode(images.movedim(1, -1))
    if tuple(encoded.shape[-2:]) != tuple(grid):
        raise ValueError(f"{NODE}: the VAE encoded the {tuple(images.shape[-2:])} px stage image to a latent of "
                         f"{tuple(encoded.shape[-2:])}, not the stage's {grid}; is this the model's VAE?")
    return encoded


def run_cascade(model, positive, negative, vae, latent: dict, seed: int, settings: HiFlowSettings,
                stage_model=None, disable_pbar: bool = True, callbacks=None) -> CascadeResult:
    """Prompt -> high resolution (an empty latent, denoise 1) or image -> high resolution (an encoded image,
    denoise < 1: the base pass is img2img on the last steps of the schedule and records that trajectory)."""
    import comfy.sample

    assert isinstance(settings, HiFlowSettings)  # made valid: every input's rule ran when it was built
    seed = SEED.check(seed, NODE)
    adapter = hiflow_family(model)
    if stage_model is not None and hiflow_family(stage_model).name != adapter.name:
        raise ValueError(f"{NODE}: 'stage_model' is {type(stage_model.model).__name__}, 'model' "
                         f"{type(model.model).__name__}; the stages must run the same family as the base pass.")
    check_conditioning(positive, negative)
    samples = latent_samples(model, latent)
    check_vae(vae, model, samples)
    grids = stage_grids(samples, settings.scales, adapter)
    sigmas = base_schedule(model, adapter, settings.steps, samples, settings.schedule)
    first = settings.steps - settings.base_steps_run
    record = Trajectory()
    callback = callbacks(model, settings.base_steps_run) if callbacks else None
    noise = comfy.sample.prepare_noise(samples, seed)
    out = comfy.sample.sample_custom(model, noise, settings.cfg, base_sampler(first, record), sigmas[first:],
                                     positive, negative, samples, callback=callback, disable_pbar=disable_pbar,
                                     seed=seed)
    stages, peak = [{"samples": out}], record.nbytes()
    for index, grid in enumerate(grids):
        steps = settings.stage_steps[index]
        last = index == len(settings.scales) - 1
        start = upscaled_start(vae, out, grid, settings.sharpen, hf.blur_width(seed, index))
        model_of_stage = stage_model or official_stage_model(model, adapter, settings.ntk_factor[index],
                                                             settings.proportional_attention)
        plan = StagePlan(offset=settings.steps - steps, reference=record.x0, alpha=settings.alphas[index],
                         beta=settings.betas[index], ratio=settings.filter_ratio[index], swin=settings.swin,
                         record=None if last else Trajectory())
        guidance = settings.stage_guidance[index]
        stage_seed = hf.stage_seed(seed, index + 1)  # seeded per stage, wrapped into torch's range (docs/hiflow.md)
        noise = comfy.sample.prepare_noise(start, stage_seed)
        callback = callbacks(model_of_stage, steps) if callbacks else None
        out = comfy.sample.sample_custom(model_of_stage, noise, settings.cfg, stage_sampler(plan),
                                         hf.stage_sigmas(sigmas, steps), _with_guidance(positive, guidance, model),
                                         _with_guidance(negative, guidance, model), start, callback=callback,
                                         disable_pbar=disable_pbar, seed=stage_seed)
        if plan.record is not None:
            peak = max(peak, record.nbytes() + plan.record.nbytes())
            record = plan.record
        stages.append({"samples": out})
        logger.debug("HiFlow stage %d: %s latent, %d steps", index + 1, tuple(out.shape), steps)
    return CascadeResult(latent={"samples": out}, stages=stages, stored_bytes=peak)
