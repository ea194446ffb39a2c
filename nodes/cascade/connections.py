"""What a cascade's connected inputs must be before anything is sampled: CONDITIONING lists, a LATENT of one image,
and a VAE that fits the MODEL. Each refusal names the node, the input and, for a VAE, both it and the model.

The VAE is checked by a round trip of a small crop of the input latent (decode, encode): the latent that comes back
must have the input's rank, channels and grid. Only the last two dimensions were compared before, so on 0.30 a
FLUX-style VAE on Qwen-Image's 5-D latents ran and returned a 16-"frame" latent.
"""

from __future__ import annotations

import torch

#: The round trip's crop: at most this many latent pixels per side (64 px for an 8x VAE), cheap for any VAE.
PROBE_SIDE = 8


def check_conditioning(positive, negative, node: str) -> None:
    for name, conditioning in (("positive", positive), ("negative", negative)):
        if not isinstance(conditioning, list):
            raise TypeError(f"{node}: '{name}' must be a CONDITIONING (from CLIP Text Encode), got "
                            f"{type(conditioning).__name__}.")


def latent_samples(model, latent, node: str) -> torch.Tensor:
    """The LATENT's samples, one image (4-D, or 5-D with one frame), at the model's channels when empty."""
    import comfy.sample

    samples = latent.get("samples") if isinstance(latent, dict) else None
    if not isinstance(samples, torch.Tensor):
        raise TypeError(f"{node}: 'latent' must be a LATENT (a dict with a 'samples' tensor, from Empty Latent Image "
                        f"or VAE Encode), got {type(latent).__name__}.")
    if samples.ndim not in (4, 5):
        raise ValueError(f"{node}: 'latent' must be an image latent, got samples of shape {tuple(samples.shape)}.")
    if samples.ndim == 5 and samples.shape[2] != 1:
        raise ValueError(f"{node}: 'latent' holds {samples.shape[2]} frames; the cascade is for single images.")
    if latent.get("noise_mask") is not None:
        raise ValueError(f"{node}: 'latent' carries a noise mask (inpainting); the cascade's stages change the latent's "
                         "size, so it cannot follow one. Remove the mask (Set Latent Noise Mask).")
    if not torch.isfinite(samples).all():
        raise ValueError(f"{node}: 'latent' holds NaN or infinite values; encode the image again.")
    return comfy.sample.fix_empty_latent_channels(model, samples)


def decoded_images(vae, samples: torch.Tensor) -> torch.Tensor:
    """``vae.decode`` as (B, H, W, C) images: a 5-D decode (one frame per latent) folded into the batch."""
    images = vae.decode(samples)
    return images.reshape(-1, *images.shape[-3:]) if images.ndim == 5 else images


@torch.no_grad()
def check_vae(vae, model, samples: torch.Tensor, node: str) -> None:
    """The VAE gives back the model's latents: decode -> encode of a small crop keeps rank, channels and grid."""
    if not callable(getattr(vae, "decode", None)) or not callable(getattr(vae, "encode", None)):
        raise TypeError(f"{node}: 'vae' must be a VAE (from Load VAE or a checkpoint), got {type(vae).__name__}.")
    crop = samples[:1, ..., :PROBE_SIDE, :PROBE_SIDE]
    engine = type(getattr(vae, "first_stage_model", vae)).__name__
    channels = getattr(vae, "latent_channels", "?")
    mismatch = (f"{node}: the 'vae' ({engine}, {channels} latent channels) does not fit the 'model' "
                f"({type(model.model).__name__}, latents of shape (batch, {', '.join(map(str, crop.shape[1:-2]))}, "
                "rows, columns)): ")
    try:
        back = vae.encode(decoded_images(vae, crop)[..., :3])
    except (RuntimeError, ValueError, TypeError, IndexError) as error:  # what torch raises on mismatched shapes
        raise ValueError(f"{mismatch}a decode -> encode round trip fails ({type(error).__name__}: {error}). Connect "
                         "the model's own VAE.") from error
    if back.ndim != crop.ndim or back.shape[1] != crop.shape[1] or back.shape[-2:] != crop.shape[-2:]:
        raise ValueError(f"{mismatch}a decode -> encode round trip of a {tuple(crop.shape)} latent gives "
                         f"{tuple(back.shape)}. Connect the model's own VAE.")
