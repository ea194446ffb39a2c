"""A tiny VAE that can encode, for the HiFlow example workflows (the cascade re-encodes every stage's image).

The image pack's VAE (``build_vae``) has no encoder res blocks, so it decodes only; this one is tests/hiflow_models'
``flux_vae`` (ComfyUI's AutoencoderKL, one res block per level, 8x, 16 channels): FLUX.1's latent shape.
"""

from __future__ import annotations

import hiflow_models


class TinyEncodingVAELoader:
    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": {"family": (["flux"],), "seed": ("INT", {"default": 0, "min": 0, "max": 2**31 - 1,
                                                                      "control_after_generate": False})}}

    RETURN_TYPES = ("VAE",)
    FUNCTION = "load"
    CATEGORY = "testing/dype_sega"

    def load(self, family: str, seed: int):
        return (hiflow_models.flux_vae(seed),)


class TinyOtherVAELoader:
    """An encoding VAE that fits no FLUX.1 model: ``channels`` other than 16 (an SD-style latent) or a
    ``compression`` other than 8x (another family's VAE): the cascades' input checks (tests/wired_values.py)."""

    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": {"channels": ("INT", {"default": 4, "min": 1, "max": 64}),
                             "compression": ([4, 8, 16],)}}

    RETURN_TYPES = ("VAE",)
    FUNCTION = "load"
    CATEGORY = "testing/dype_sega"

    def load(self, channels: int, compression: int):
        return (hiflow_models.flux_vae(0, channels=channels, compression=int(compression)),)


NODE_CLASS_MAPPINGS = {"DyPESEGATest_TinyEncodingVAELoader": TinyEncodingVAELoader,
                       "DyPESEGATest_TinyOtherVAELoader": TinyOtherVAELoader}
