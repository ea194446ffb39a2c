"""HiFlow's flow-aligned guidance as pure torch (arXiv 2504.06232; official code Bujiazi/HiFlow at da351a8).

What one high-resolution stage step does to the model's x0 prediction and velocity, the swin patchify bookkeeping,
the stage schedule and the sharpening of the upsampled image. The sampler that drives these through
ComfyUI is ``nodes/cascade/``; docs/hiflow.md explains the method and where we differ from the official code.

Shapes: every latent is ``(..., H, W)``; the filter, pad and crop act on the last two dims, so ComfyUI's 4-D image
latents and the 5-D single-frame latents (Qwen-Image) take the same path.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .flow_shift import exponential_shift, linear_shift

#: The official velocity divides by sigma + this (flowmatch_step), so a stage never divides by zero.
VELOCITY_EPS = 1e-6
#: The official Butterworth order and the sharpening blur: a 3x3 Gaussian whose width (standard deviation, px;
#: torchvision's "sigma") is drawn from this range.
BUTTERWORTH_ORDER = 4
SHARPEN_KERNEL = 3
BLUR_WIDTH_RANGE = (0.1, 2.0)
#: Seeds live in torch's generator range [0, 2**64): a stage's seed wraps modulo this, so the widget's largest seed
#: works in every stage (nodes/cascade/hiflow.py).
SEED_SPACE = 2**64


#: FLUX.1-dev's scheduler config (black-forest-labs/FLUX.1-dev scheduler/scheduler_config.json): dynamic shifting
#: on, mu linear in the image tokens from (256, 0.5) to (4096, 1.15). run_hiflow.py's
#: ``pipe.scheduler.use_dynamic_shifting = False`` sets a plain attribute, while diffusers 0.32.1's ``set_timesteps``
#: reads ``self.config.use_dynamic_shifting``, so the official schedule is this dynamic one (static ``shift`` 3 unused).
FLUX1_DEV_SHIFT = {"base_tokens": 256, "base_shift": 0.5, "max_tokens": 4096, "max_shift": 1.15}


def schedule_times(steps: int) -> torch.Tensor:
    """The official base grid before the shift: linspace(1, 1/steps, steps), float64."""
    if steps < 1:
        raise ValueError(f"HiFlow needs at least 1 base step, got {steps}.")
    return torch.linspace(1.0, 1.0 / steps, steps, dtype=torch.float64)


def dynamic_mu(image_tokens: float, config: dict = FLUX1_DEV_SHIFT) -> float:
    """The official pipeline's ``calculate_shift``: mu linear in the base pass's image tokens (not clamped)."""
    slope = (config["max_shift"] - config["base_shift"]) / (config["max_tokens"] - config["base_tokens"])
    return config["base_shift"] + slope * (image_tokens - config["base_tokens"])


def dynamic_sigmas(steps: int, mu: float) -> torch.Tensor:
    """σ = e^mu / (e^mu + 1/t - 1) on the official grid, then 0: diffusers' exponential time shift (float64)."""
    sigmas = exponential_shift(schedule_times(steps), mu)
    return torch.cat([sigmas, sigmas.new_zeros(1)])


def static_sigmas(steps: int, shift: float) -> torch.Tensor:
    """σ = shift·t / (1 + (shift - 1)·t) on the official grid, then 0: diffusers' static shift (float64)."""
    sigmas = linear_shift(schedule_times(steps), shift)
    return torch.cat([sigmas, sigmas.new_zeros(1)])


def stage_sigmas(base_sigmas: torch.Tensor, steps: int) -> torch.Tensor:
    """A stage's sigmas: the last ``steps`` timesteps of the base schedule and its final 0 (time-matched)."""
    available = base_sigmas.shape[0] - 1
    if not 1 <= steps <= available:
        raise ValueError(f"A HiFlow stage of {steps} steps needs 1..{available} (the base schedule's steps).")
    return base_sigmas[-(steps + 1):]


def stage_weights(alpha: float, beta: float, steps: int, step: int) -> tuple[float, float]:
    """α and β at step ``step`` of ``steps``: both decay linearly, (steps - step) / steps."""
    decay = (steps - step) / steps
    return alpha * decay, beta * decay


def butterworth_mask(height: int, width: int, ratio: float, order: int = BUTTERWORTH_ORDER,
                     device: torch.device | str | None = None) -> torch.Tensor:
    """The centred (fftshift-ed) Butterworth low-pass mask, float32 like the official one.

    d² = (2h/H - 1)² + (2w/W - 1)², mask = 1 / (1 + (d² / ratio²)^order); ratio 0 is the all-zero mask.
    """
    if ratio == 0:
        return torch.zeros(height, width, dtype=torch.float32, device=device)
    rows = (2.0 * torch.arange(height, dtype=torch.float64) / height - 1.0) ** 2
    cols = (2.0 * torch.arange(width, dtype=torch.float64) / width - 1.0) ** 2
    d_square = rows[:, None] + cols[None, :]
    mask = 1.0 / (1.0 + (d_square / ratio**2) ** order)
    return mask.to(device=device, dtype=torch.float32)


def low_pass(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """FFT over the last two dims, centre, multiply by ``mask``, back; the real part, in the mask's dtype."""
    spectrum = torch.fft.fftshift(torch.fft.fft2(x.to(mask.dtype)), dim=(-2, -1))
    return torch.fft.ifft2(torch.fft.ifftshift(spectrum * mask, dim=(-2, -1))).real


def align_structure(x0: torch.Tensor, x0_ref: torch.Tensor, mask: torch.Tensor, alpha: float) -> torch.Tensor:
    """x0 + α·(LP(x0_ref) - LP(x0)): the low frequencies pulled toward the reference's."""
    return x0 + alpha * (low_pass(x0_ref, mask) - low_pass(x0, mask))


def velocity(x: torch.Tensor, x0: torch.Tensor, sigma: torch.Tensor | float) -> torch.Tensor:
    """The flow velocity that takes ``x`` at ``sigma`` to ``x0``, as the official stage computes it."""
    return (x - x0) / (sigma + VELOCITY_EPS)


def align_acceleration(v: torch.Tensor, v_ref: torch.Tensor, v_prev: torch.Tensor, v_ref_prev: torch.Tensor,
                       beta: float) -> torch.Tensor:
    """v + β·((v_prev - v) - (v_ref_prev - v_ref)): the change of velocity pulled toward the reference's."""
    return v + beta * (v_prev + v_ref - v_ref_prev - v)


def swin_pad(x: torch.Tensor) -> torch.Tensor:
    """Zero-pad one latent pixel on every side: the patch grid shifts by one pixel (the even steps)."""
    return F.pad(x, (1, 1, 1, 1), mode="constant", value=0.0)


def swin_crop(x: torch.Tensor) -> torch.Tensor:
    """Take the one-pixel border off again (the odd steps)."""
    return x[..., 1:-1, 1:-1]


def swin_step(x: torch.Tensor, step: int) -> torch.Tensor:
    """The latent a stage step feeds the model: padded on even steps, cropped back on odd ones."""
    return swin_pad(x) if step % 2 == 0 else swin_crop(x)


def match_grid(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``x`` padded or cropped by one pixel per side to ``like``'s grid (the previous step's velocities)."""
    rows, cols = x.shape[-2], x.shape[-1]
    target_rows, target_cols = like.shape[-2], like.shape[-1]
    if (rows, cols) == (target_rows, target_cols):
        return x
    if (rows + 2, cols + 2) == (target_rows, target_cols):
        return swin_pad(x)
    if (rows - 2, cols - 2) == (target_rows, target_cols):
        return swin_crop(x)
    raise ValueError(f"HiFlow: cannot match a {tuple(x.shape)} grid to {tuple(like.shape)} (swin moves one pixel).")


def resize_like(reference: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """The stored x0 of the previous stage, bicubic-resized (align_corners False) to ``like``'s grid (the
    official "latent" upsampling); leading dims are folded so 5-D latents resize as 4-D."""
    if reference.shape[-2:] == like.shape[-2:]:
        return reference.to(like.dtype)
    lead = reference.shape[:-2]
    flat = reference.reshape(lead[0], -1, *reference.shape[-2:]).to(like.dtype)
    out = F.interpolate(flat, size=tuple(like.shape[-2:]), mode="bicubic", align_corners=False)
    return out.reshape(*lead, *like.shape[-2:])


def stage_seed(seed: int, offset: int) -> int:
    """``seed + offset`` wrapped into torch's seed range [0, 2**64) (``SEED_SPACE``), so that every seed the widget
    allows, its largest included, seeds every stage; below the top of the range it is plain ``seed + offset``."""
    return (int(seed) + int(offset)) % SEED_SPACE


def blur_width(seed: int, stage: int, width_range: tuple[float, float] = BLUR_WIDTH_RANGE) -> float:
    """The sharpening blur's width of stage ``stage``: the official code draws it from ``width_range`` with
    torchvision's global RNG on each call; ours draws it uniformly from a generator seeded with ``seed + stage``
    (the "seeded" rule)."""
    low, high = width_range
    generator = torch.Generator().manual_seed(stage_seed(seed, stage))
    return low + (high - low) * float(torch.rand((), generator=generator, dtype=torch.float64))


def gaussian_kernel(width: float, size: int = SHARPEN_KERNEL) -> torch.Tensor:
    """torchvision's 1-D Gaussian of standard deviation ``width``: exp(-x²/2w²) on x = -(size-1)/2 .. (size-1)/2,
    normalised, float64."""
    half = (size - 1) / 2.0
    x = torch.linspace(-half, half, size, dtype=torch.float64)
    pdf = torch.exp(-0.5 * (x / width) ** 2)
    return pdf / pdf.sum()


def sharpen(image: torch.Tensor, width: float, amount: float = 1.0, size: int = SHARPEN_KERNEL) -> torch.Tensor:
    """Unsharp mask (1 + a)·img - a·blur(img) on a (B, C, H, W) image, the blur a Gaussian of standard deviation
    ``width`` px padded by reflection, as torchvision's GaussianBlur does. Linear, so [0, 1] and [-1, 1] images give
    the same result after rescaling."""
    if amount == 0:
        return image
    kernel = gaussian_kernel(width, size).to(device=image.device, dtype=image.dtype)
    channels, pad = image.shape[1], size // 2
    padded = F.pad(image, (pad, pad, pad, pad), mode="reflect")
    rows = kernel.view(1, 1, size, 1).expand(channels, 1, size, 1)
    cols = kernel.view(1, 1, 1, size).expand(channels, 1, 1, size)
    blurred = F.conv2d(F.conv2d(padded, cols, groups=channels), rows, groups=channels)
    return (1.0 + amount) * image - amount * blurred

