"""Between passes: the previous result decoded, resized bicubically to the next stage's pixels, optionally
sharpened, and encoded again (the VAE's mode): HiFlow's stage start and I-Max's guide."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ...spectral import hiflow as hf
from .connections import decoded_images


@torch.no_grad()
def upscaled_latent(vae, samples: torch.Tensor, grid: tuple[int, int], node: str, sharpen: float = 0.0,
                    blur_width: float = 1.0) -> torch.Tensor:
    """Decode, bicubic to the stage's pixels, sharpen by ``sharpen`` (0: none), encode; a LATENT's samples."""
    images = decoded_images(vae, samples)[..., :3].movedim(-1, 1).float()
    ratio = images.shape[-2] // samples.shape[-2]
    images = F.interpolate(images, size=(grid[0] * ratio, grid[1] * ratio), mode="bicubic", align_corners=False)
    images = hf.sharpen(images, blur_width, sharpen)
    encoded = vae.encode(images.movedim(1, -1))
    if tuple(encoded.shape[-2:]) != tuple(grid):
        raise ValueError(f"{node}: the VAE encoded the {tuple(images.shape[-2:])} px stage image to a latent of "
                         f"{tuple(encoded.shape[-2:])}, not the stage's {grid}; is this the model's VAE?")
    return encoded
