"""What a cascade's connected inputs must be before anything is sampled: CONDITIONING lists, a LATENT of one image
with the MODEL's channels, and a VAE that fits the MODEL. Each refusal names the node, the input and, for a VAE,
both it and the model.

The latent's channels are the MODEL's own latent format's (``latent_format.latent_channels``): a latent encoded by
another model's VAE is named as such, not blamed on the VAE. The VAE is checked twice: its spatial compression
(``spacial_compression_decode()``, on both hosts) must be the family's (its pixels per token over its patch: 8 for
FLUX.1, 16 for Flux.2 and Qwen-Image 2.1), since a VAE of the same channels and another compression passes a round
trip and decodes to a meaningless image; then a round trip of a small crop of the input latent (decode, encode)
must give back the input's rank, channels and grid. Only the last two dimensions were compared before, so on 0.30 a
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


def model_channels(model) -> int:
    """The latent channels of the MODEL's own latent format."""
    return int(model.get_model_object("latent_format").latent_channels)


def latent_samples(model, latent, node: str) -> torch.Tensor:
    """The LATENT's samples, one image (4-D, or 5-D with one frame), at the model's channels when empty, or an error
    naming 'latent' and the model's channel count when they are another model's."""
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
    samples = comfy.sample.fix_empty_latent_channels(model, samples)
    channels = model_channels(model)
    if samples.shape[1] != channels:
        raise ValueError(f"{node}: 'latent' has {samples.shape[1]} channels, but the 'model' "
                         f"({type(model.model).__name__}) takes {channels}-channel latents: it is another model's "
                         "latent (its VAE encoded it). Encode the image with this model's VAE (VAE Encode), or start "
                         "from an empty latent.")
    return samples


def decoded_images(vae, samples: torch.Tensor) -> torch.Tensor:
    """``vae.decode`` as (B, H, W, C) images: a 5-D decode (one frame per latent) folded into the batch."""
    images = vae.decode(samples)
    return images.reshape(-1, *images.shape[-3:]) if images.ndim == 5 else images


@torch.no_grad()
def check_vae(vae, model, samples: torch.Tensor, node: str, compression: int) -> None:
    """The VAE gives back the model's latents: the family's spatial ``compression`` (image pixels per latent pixel),
    and a decode -> encode of a small crop that keeps rank, channels and grid."""
    if not callable(getattr(vae, "decode", None)) or not callable(getattr(vae, "encode", None)):
        raise TypeError(f"{node}: 'vae' must be a VAE (from Load VAE or a checkpoint), got {type(vae).__name__}.")
    crop = samples[:1, ..., :PROBE_SIDE, :PROBE_SIDE]
    engine = type(getattr(vae, "first_stage_model", vae)).__name__
    channels = getattr(vae, "latent_channels", "?")
    mismatch = (f"{node}: 'vae' ({engine}, {channels} latent channels) does not fit the 'model' "
                f"({type(model.model).__name__}, latents of shape (batch, {model_channels(model)}"
                f"{', 1' if crop.ndim == 5 else ''}, rows, columns), {compression} px per latent pixel): ")
    spatial = getattr(vae, "spacial_compression_decode", None)
    vae_compression = spatial() if callable(spatial) else None
    if isinstance(vae_compression, int) and vae_compression != compression:
        raise ValueError(f"{mismatch}it decodes {vae_compression} px per latent pixel. Connect the model's own VAE.")
    try:
        back = vae.encode(decoded_images(vae, crop)[..., :3])
    except (RuntimeError, ValueError, TypeError, IndexError) as error:  # what torch raises on mismatched shapes
        raise ValueError(f"{mismatch}a decode -> encode round trip fails ({type(error).__name__}: {error}). Connect "
                         "the model's own VAE.") from error
    if back.ndim != crop.ndim or back.shape[1] != crop.shape[1] or back.shape[-2:] != crop.shape[-2:]:
        raise ValueError(f"{mismatch}a decode -> encode round trip of a {tuple(crop.shape)} latent gives "
                         f"{tuple(back.shape)}. Connect the model's own VAE.")
