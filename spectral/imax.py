"""I-Max's projected flow as pure torch (arXiv 2410.07536; official code PRIS-CV/I-Max at 3b38c11).

One step of the extrapolated-resolution pass: the model's velocity v is pulled toward the velocity that takes the
current latent straight to the guide (the native-resolution result, upsampled: the "projected flow"), on the low
frequencies of a Haar wavelet split, with a weight that follows the guidance schedule. docs/imax.md explains the
method and where we differ from the official code; ``nodes/cascade/`` drives it through ComfyUI.

Shapes: every latent is ``(..., H, W)``; the wavelet split acts on the last two dims, so 4-D image latents and the
5-D single-frame latents (Qwen-Image) take the same path.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

#: The official projection divides by t/1000 + this (t/1000 is the step's sigma), so it never divides by zero.
PROJECTION_EPS = 1e-6

#: The official guidance schedules (``guidance_schedule``) and the weight each gives the projection at step i of N
#: (w = 0.5·(1 + cos(π·i/N)), from 1 down to about 0): "cosine_decay" (the README's, our default) pulls the low
#: frequencies by w; "cosine_shift" (the pipeline's keyword default) pulls all frequencies by w and the low ones by
#: 1 - w on top; "constant" pulls the low frequencies fully; "disable" leaves the model's velocity.
COSINE_DECAY = "cosine_decay"
COSINE_SHIFT = "cosine_shift"
CONSTANT = "constant"
DISABLE = "disable"
GUIDANCE_SCHEDULES = (COSINE_DECAY, COSINE_SHIFT, CONSTANT, DISABLE)


def guidance_weight(step: int, steps: int) -> float:
    """The official ``cosine_factor`` at step ``step`` (0-based) of ``steps``: 0.5·(1 + cos(π·step/steps))."""
    if steps < 1 or not 0 <= step < steps:
        raise ValueError(f"I-Max: step {step} is outside a pass of {steps} steps.")
    return 0.5 * (1.0 + math.cos(math.pi * step / steps))


def projected_velocity(x: torch.Tensor, guide: torch.Tensor, sigma: torch.Tensor | float) -> torch.Tensor:
    """The velocity that takes ``x`` at ``sigma`` straight to ``guide``: (x - guide)/(σ + 1e-6)."""
    return (x - guide) / (sigma + PROJECTION_EPS)


def haar_low_pass(x: torch.Tensor, level: int = 1) -> torch.Tensor:
    """The Haar wavelet approximation of ``x`` at ``level``, reconstructed with every detail band zeroed.

    What the official ``split_frequency_components_dwt`` gets from PyWavelets (``wavedec2`` / ``waverec2``, 'haar',
    mode 'symmetric'): each level replaces 2 x 2 blocks by their mean, an odd side first extended by repeating its
    last row / column (the symmetric extension), and the reconstruction trims back to each level's size. At level 1
    on an even grid that is the 2 x 2 block mean, broadcast back.
    """
    if level < 1:
        raise ValueError(f"I-Max: the wavelet level must be >= 1, got {level}.")
    lead = x.shape[:-2]
    low = x.reshape(-1, 1, *x.shape[-2:])
    sizes = []
    for _ in range(level):
        rows, cols = low.shape[-2:]
        sizes.append((rows, cols))
        low = F.pad(low, (0, cols % 2, 0, rows % 2), mode="replicate") if rows % 2 or cols % 2 else low
        low = F.avg_pool2d(low, 2)
    for rows, cols in reversed(sizes):
        low = low.repeat_interleave(2, dim=-2).repeat_interleave(2, dim=-1)[..., :rows, :cols]
    return low.reshape(*lead, *x.shape[-2:])


def project(velocity: torch.Tensor, target: torch.Tensor, weight: float, schedule: str = COSINE_DECAY,
            level: int = 1) -> torch.Tensor:
    """The guided velocity of one step: ``velocity`` (the model's) pulled toward ``target`` (the projected flow)
    under ``schedule`` with the step's ``weight`` (``guidance_weight``); the low frequencies are ``haar_low_pass``."""
    if schedule == DISABLE:
        return velocity
    if schedule not in GUIDANCE_SCHEDULES:
        raise ValueError(f"I-Max: 'guidance_schedule' must be one of {', '.join(GUIDANCE_SCHEDULES)}; got "
                         f"{schedule!r}.")
    low = haar_low_pass(target, level) - haar_low_pass(velocity, level)
    if schedule == COSINE_DECAY:
        return velocity + weight * low
    if schedule == CONSTANT:
        return velocity + low
    return velocity + weight * (target - velocity) + (1.0 - weight) * low


def pad_like(guide: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """The guide on the step's grid: as is, or zero-padded by one latent pixel per side on a swin-padded step
    (the official pads and crops the guide latent exactly as the latent itself, so its border is zero)."""
    rows, cols = guide.shape[-2:]
    if (rows, cols) == tuple(like.shape[-2:]):
        return guide
    if (rows + 2, cols + 2) == tuple(like.shape[-2:]):
        return F.pad(guide, (1, 1, 1, 1), mode="constant", value=0.0)
    raise ValueError(f"I-Max: the guide's grid {(rows, cols)} does not match the step's {tuple(like.shape[-2:])} "
                     "(swin moves one pixel).")


def text_copies(rows: int, cols: int, trained_rows: int, trained_cols: int) -> tuple[int, int]:
    """How many copies of the prompt text duplication puts down and across: one per trained grid that fits in the
    call's token grid (the official ``max(1, (max row id + 1) // 64)``, 64 = FLUX.1's trained rows)."""
    return max(1, rows // trained_rows), max(1, cols // trained_cols)
