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


NODE_CLASS_MAPPINGS = {"DyPESEGATest_TinyEncodingVAELoader": TinyEncodingVAELoader}
