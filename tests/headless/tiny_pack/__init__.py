"""Test-only node pack: tiny random-weight stand-ins for the model, text-encoder and VAE loaders.

Loaded with ComfyUI's ``nodes.load_custom_node`` by tests/headless/registry.py. The runner swaps the stock loaders
of an example workflow for these; everything downstream (our nodes, FluxGuidance, KSampler, VAEDecodeTiled,
SaveImage) runs unchanged. Models come from ComfyUI's own classes:
- MODEL: tests/tiny_models.py (``supported_models.Flux`` / ``QwenImage`` with a tiny unet_config, random weights).
- VAE: ``comfy.sd.VAE``. Qwen: a Wan 2.1 VAE state dict (the real architecture, width 8) through ComfyUI's own
  detection. Flux: ComfyUI's ``config=`` path (``AutoencoderKL``, the same Encoder/Decoder classes and 8× scale as
  ``ae``, width 32-64, one res block per level), because the detected Flux path hard-codes width 128-512: seconds
  per tiled decode on CPU.
- CLIP: a deterministic stand-in text encoder (``TinyTextEncoder``), not a ComfyUI class: it has the two methods
  ``CLIPTextEncode`` calls and returns CONDITIONING of the tiny models' width (32) with the keys each family needs.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from pathlib import Path

import torch

_TESTS = str(Path(__file__).resolve().parents[2])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

import tiny_models  # noqa: E402  (needs tests/ on sys.path, added just above)

FAMILIES = ["flux", "qwen_image"]


def _randomize(module: torch.nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """A seeded random state dict with sane scales (ComfyUI's ops skip weight init, so the module holds garbage)."""
    gen = torch.Generator().manual_seed(seed)
    sd = {}
    for name, t in module.state_dict().items():
        noise = torch.randn(t.shape, generator=gen)
        if name.endswith("gamma") or (t.ndim == 1 and "norm" in name and name.endswith("weight")):
            sd[name] = 1.0 + 0.05 * noise  # norm scales near 1
        elif t.ndim <= 1:
            sd[name] = 0.02 * noise
        else:
            sd[name] = noise / (t[0].numel() ** 0.5)  # ~unit-variance activations through convs
    return sd


def build_vae(family: str, seed: int = 0):
    import comfy.sd

    if family == "qwen_image":
        from comfy.ldm.wan.vae import WanVAE

        arch = WanVAE(dim=8, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                      temperal_downsample=[False, True, True])
        return comfy.sd.VAE(sd=_randomize(arch, seed))
    from comfy.ldm.models.autoencoder import AutoencoderKL

    params = {"embed_dim": 16, "ddconfig": {"double_z": True, "z_channels": 16, "resolution": 256, "in_channels": 3,
                                            "out_ch": 3, "ch": 32, "ch_mult": [1, 1, 2, 2], "num_res_blocks": 1,
                                            "attn_resolutions": [], "dropout": 0.0}}
    vae = comfy.sd.VAE(sd=_randomize(AutoencoderKL(**params), seed), config={"params": params})
    vae.latent_channels = 16  # the config path leaves the SD1 default (4)
    return vae


class TinyTextEncoder:
    """Stand-in for a CLIP object: words → rows of a fixed random table, width ``tiny_models.TEXT_WIDTH``."""

    def __init__(self, family: str, seed: int = 0) -> None:
        self.family = family
        self.table = torch.randn(4096, tiny_models.TEXT_WIDTH, generator=torch.Generator().manual_seed(seed))

    def tokenize(self, text: str) -> list[int]:
        # crc32, not hash(): stable across processes, so a prompt always gives the same conditioning.
        words = text.split()[:64] or [""]
        return [zlib.crc32(w.encode("utf-8")) % len(self.table) for w in words]

    def encode_from_tokens_scheduled(self, tokens: list[int], **_: object) -> list:
        cond = self.table[torch.tensor(tokens)].unsqueeze(0)
        extra = {"pooled_output": cond.mean(dim=1)} if self.family == "flux" else {}
        return [[cond, extra]]


def _family_input() -> dict:
    return {"family": (FAMILIES,), "seed": ("INT", {"default": 0, "min": 0, "max": 2**31 - 1,
                                                   "control_after_generate": False})}


class TinyModelLoader:
    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": _family_input()}

    RETURN_TYPES = ("MODEL",)
    FUNCTION = "load"
    CATEGORY = "testing/dype_sega"

    def load(self, family: str, seed: int):
        return (tiny_models.FAMILIES[family].build(seed),)


class TinyCLIPLoader(TinyModelLoader):
    RETURN_TYPES = ("CLIP",)

    def load(self, family: str, seed: int):
        return (TinyTextEncoder(family, seed),)


class TinyVAELoader(TinyModelLoader):
    RETURN_TYPES = ("VAE",)

    def load(self, family: str, seed: int):
        return (build_vae(family, seed),)


class TinyImageStats:
    """Output node: shape, finiteness and a digest of the decoded IMAGE (a PNG would hide NaNs as black)."""

    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": {"images": ("IMAGE",)}}

    RETURN_TYPES = ()
    FUNCTION = "stats"
    OUTPUT_NODE = True
    CATEGORY = "testing/dype_sega"

    def stats(self, images: torch.Tensor):
        stats = {"shape": list(images.shape), "finite": bool(torch.isfinite(images).all()),
                 "min": float(images.min()), "max": float(images.max()), "mean": float(images.mean()),
                 "std": float(images.std()),
                 "frame_std_min": float(images.flatten(1).std(dim=1).min()),  # a video: no flat frame
                 "sha1": hashlib.sha1(images.float().contiguous().numpy().tobytes()).hexdigest()}
        return {"ui": {"tiny_stats": [stats]}}


class TinyLatentStats(TinyImageStats):
    """Output node: the same digest for a LATENT (tests that need no decode)."""

    @classmethod
    def INPUT_TYPES(cls) -> dict:
        return {"required": {"samples": ("LATENT",)}}

    def stats(self, samples: dict):
        return super().stats(samples["samples"])


NODE_CLASS_MAPPINGS = {
    "DyPESEGATest_TinyModelLoader": TinyModelLoader,
    "DyPESEGATest_TinyCLIPLoader": TinyCLIPLoader,
    "DyPESEGATest_TinyVAELoader": TinyVAELoader,
    "DyPESEGATest_TinyImageStats": TinyImageStats,
    "DyPESEGATest_TinyLatentStats": TinyLatentStats,
}

from .video import NODE_CLASS_MAPPINGS as _VIDEO_NODES  # noqa: E402  (its loaders reuse the classes above)

NODE_CLASS_MAPPINGS.update(_VIDEO_NODES)
