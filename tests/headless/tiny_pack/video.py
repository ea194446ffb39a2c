"""Tiny stand-ins for the loaders of the video example workflows (Wan 2.1 / 2.2 14B).

- MODEL: tests/tiny_video.py (``supported_models.WAN21_T2V``, one block, random weights) at the width the pack
  tells the two Wan sizes apart by: 1536 for Wan 2.1 1.3B (``wan21_1_3b``), 256 for the 14B models (``wan_14b``:
  any other width), so the tiny model is detected as the family the real file is.
- VAE: the Wan 2.1 VAE architecture at width 8 through ComfyUI's own detection (the Qwen-Image stand-in: Qwen-Image
  ships this VAE), 4x temporal and 8x spatial compression as ``wan_2.1_vae``.
- CLIP: the image pack's deterministic text encoder; Wan's cross-attention takes the text rows only (no pooled).
"""

from __future__ import annotations

import tiny_video

from . import TinyTextEncoder, build_vae

#: pack adapter name -> config overrides of tiny_video's Wan 2.1 T2V stand-in
WAN_SIZES: dict[str, dict] = {
    "wan21_1_3b": {"dim": 1536, "num_heads": 12},  # head dim 128 as the real model: RoPE axes [44, 42, 42]
    "wan_14b": {},
}
VIDEO_FAMILIES = list(WAN_SIZES)


def _video_input() -> dict:
    return {"family": (VIDEO_FAMILIES,), "seed": ("INT", {"default": 0, "min": 0, "max": 2**31 - 1,
                                                         "control_after_generate": False})}


class TinyVideoModelLoader:
    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": _video_input()}

    RETURN_TYPES = ("MODEL",)
    FUNCTION = "load"
    CATEGORY = "testing/dype_sega"

    def load(self, family: str, seed: int):
        return (tiny_video.build("wan21", seed=seed, **WAN_SIZES[family]),)


class TinyVideoCLIPLoader(TinyVideoModelLoader):
    RETURN_TYPES = ("CLIP",)

    def load(self, family: str, seed: int):
        return (TinyTextEncoder(family, seed),)


class TinyVideoVAELoader(TinyVideoModelLoader):
    RETURN_TYPES = ("VAE",)

    def load(self, family: str, seed: int):
        return (build_vae("qwen_image", seed),)  # the Wan 2.1 VAE architecture


NODE_CLASS_MAPPINGS = {
    "DyPESEGATest_TinyVideoModelLoader": TinyVideoModelLoader,
    "DyPESEGATest_TinyVideoCLIPLoader": TinyVideoCLIPLoader,
    "DyPESEGATest_TinyVideoVAELoader": TinyVideoVAELoader,
}
