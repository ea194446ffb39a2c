"""Tiny models for the HiFlow host tests: the tiny FLUX of tiny_models and a tiny VAE that can encode too.

tests/headless/tiny_pack's VAE decodes only (no encoder res blocks, for fast workflow runs); a cascade re-encodes
every stage's image, so this one is ComfyUI's ``AutoencoderKL`` through ``comfy.sd.VAE(config=...)`` with one res
block per level, 8x like FLUX's VAE, 16 latent channels, seeded random weights.
"""

from __future__ import annotations

from functools import cache


@cache
def flux_vae(seed: int = 0, channels: int = 16, compression: int = 8):
    """FLUX.1's latent shape by default; ``channels`` 4: an SD-style VAE that fits no FLUX model (the VAE check);
    ``compression`` 4 or 16: a VAE of FLUX's channels and another family's spatial compression (the same check)."""
    import comfy.sd
    from comfy.ldm.models.autoencoder import AutoencoderKL
    from headless.tiny_pack import _randomize

    params = {"embed_dim": channels, "ddconfig": {
        "double_z": True, "z_channels": channels, "resolution": 256, "in_channels": 3, "out_ch": 3, "ch": 32,
        "ch_mult": [1, 1, 2, 2, 2][:compression.bit_length()], "num_res_blocks": 1, "attn_resolutions": [],
        "dropout": 0.0}}
    vae = comfy.sd.VAE(sd=_randomize(AutoencoderKL(**params), seed), config={"params": params})
    vae.latent_channels = channels
    vae.downscale_ratio = vae.upscale_ratio = compression  # the config path leaves SD1's 8x
    return vae
