"""Test-only node pack: tiny random-weight stand-ins for the model, text-encoder and VAE loaders.

Loaded with ComfyUI's ``nodes.load_custom_node`` by tests/headless/registry.py. The runner swaps the stock loaders
of an example workflow for these; everything downstream (our nodes, FluxGuidance, KSampler, VAEDecodeTiled,
SaveImage) runs unchanged. One loader of each kind serves every family (the ``family`` input, an adapter name):
- MODEL: tests/tiny_models.py (``supported_models.<Family>`` with a tiny unet_config, random weights).
- VAE: ``comfy.sd.VAE`` with the family's latent channels and scale. Qwen-Image and Krea 2 (5-D latents): a Wan 2.1
  VAE state dict (the real architecture, width 8) through ComfyUI's own detection. Pixel-space families: ComfyUI's
  own ``pixel_space`` VAE. The others: ComfyUI's ``config=`` path (``AutoencoderKL``, the Encoder/Decoder classes of
  ``ae``, width 32 at every level (no encoder res blocks, so a widening level would break VAEEncode: the edit
  workflows encode a reference), one decoder res block per level, as many levels as the scale needs: 8x Flux, 16x Flux.2, 32x
  HunyuanImage), because the detected paths hard-code full widths: seconds per tiled decode on CPU.
- IMAGE (LoadImage, the edit workflows' reference picture): a small seeded random image (``TinyImage``).
- CLIP: a deterministic stand-in text encoder (``TinyTextEncoder``), not a ComfyUI class: it has the methods
  ``CLIPTextEncode`` and ``T5TokenizerOptions`` call and returns CONDITIONING of the tiny model's text width with
  the keys the family needs (tiny_models' conditioning builder of that family: pooled output, Llama layers, mask).
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

FAMILIES = list(tiny_models.FAMILIES)  # adapter names; a family the host lacks fails in its model loader


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

    fam = tiny_models.FAMILIES[family]
    latent = fam.latent(1, 1, 1)
    channels, factor = latent.shape[1], fam.px_per_token // fam.patch
    if latent.ndim == 5:  # Qwen-Image, Krea 2: qwen_image_vae is a Wan 2.1 VAE
        from comfy.ldm.wan.vae import WanVAE

        arch = WanVAE(dim=8, z_dim=channels, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                      temperal_downsample=[False, True, True])
        return comfy.sd.VAE(sd=_randomize(arch, seed))
    if factor == 1:  # pixel space: ComfyUI's own, as the VAELoader's "pixel_space" entry loads it
        import nodes

        return nodes.VAELoader().load_vae("pixel_space")[0]
    from comfy.ldm.models.autoencoder import AutoencoderKL

    levels = factor.bit_length()  # 8x: 4 levels, 16x: 5, 32x: 6
    params = {"embed_dim": channels, "ddconfig": {
        "double_z": True, "z_channels": channels, "resolution": 256, "in_channels": 3, "out_ch": 3, "ch": 32,
        "ch_mult": [1] * levels, "num_res_blocks": 0, "attn_resolutions": [], "dropout": 0.0}}
    vae = comfy.sd.VAE(sd=_randomize(AutoencoderKL(**params), seed), config={"params": params})
    vae.latent_channels = channels  # the config path leaves the SD1 defaults (4 channels, 8x)
    vae.downscale_ratio = vae.upscale_ratio = factor
    return vae


def _family_conditioning(family: str, n_tokens: int, seed: int) -> list:
    """[text, extra keys] as tiny_models builds them for ``family``; families it does not build (video:
    tests/tiny_video.py) get text rows of ``TEXT_WIDTH`` and no extra keys."""
    fam = tiny_models.FAMILIES.get(family)
    if fam is None:
        return [torch.zeros(1, n_tokens, tiny_models.TEXT_WIDTH), {}]
    return fam.cond(n_tokens, seed)[0]


class TinyTextEncoder:
    """Stand-in for a CLIP object: words → rows of a fixed random table as wide as the family's text input, plus the
    conditioning keys of the family (tiny_models' builder for it)."""

    def __init__(self, family: str, seed: int = 0) -> None:
        self.family, self.seed = family, seed
        self.width = _family_conditioning(family, 1, seed)[0].shape[-1]
        self.table = torch.randn(1024, self.width, generator=torch.Generator().manual_seed(seed))

    def clone(self) -> TinyTextEncoder:
        return self  # stateless: nothing a tokenizer option could change

    def set_tokenizer_option(self, name: str, value: object) -> None:
        return None  # T5TokenizerOptions (Chroma): padding options of a tokenizer this stand-in does not have

    def tokenize(self, text: str, **_: object) -> list[int]:
        # crc32, not hash(): stable across processes, so a prompt always gives the same conditioning.
        words = text.split()[:64] or [""]
        return [zlib.crc32(w.encode("utf-8")) % len(self.table) for w in words]

    def encode_from_tokens_scheduled(self, tokens: list[int], **_: object) -> list:
        cond = self.table[torch.tensor(tokens)].unsqueeze(0)
        extra = dict(_family_conditioning(self.family, len(tokens), self.seed)[1])
        if extra.get("pooled_output") is not None:
            extra["pooled_output"] = cond.mean(dim=1)
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


class TinyImage:
    """Stand-in for LoadImage (an edit workflow's reference picture): a seeded random RGB image and LoadImage's
    empty mask, so its two outputs keep their slots. Non-square on purpose: a reference keeps its own aspect."""

    @classmethod
    def INPUT_TYPES(cls) -> dict:
        size = {"default": 96, "min": 16, "max": 1024, "step": 8}
        return {"required": {"width": ("INT", size), "height": ("INT", size | {"default": 64}),
                             "seed": ("INT", {"default": 0, "min": 0, "max": 2**31 - 1,
                                              "control_after_generate": False})}}

    RETURN_TYPES = ("IMAGE", "MASK")
    FUNCTION = "load"
    CATEGORY = "testing/dype_sega"

    def load(self, width: int, height: int, seed: int):
        image = torch.rand(1, height, width, 3, generator=torch.Generator().manual_seed(seed))
        return image, torch.zeros(1, height, width)


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
    "DyPESEGATest_TinyImage": TinyImage,
    "DyPESEGATest_TinyImageStats": TinyImageStats,
    "DyPESEGATest_TinyLatentStats": TinyLatentStats,
}

from .video import NODE_CLASS_MAPPINGS as _VIDEO_NODES  # noqa: E402  (its loaders reuse the classes above)

NODE_CLASS_MAPPINGS.update(_VIDEO_NODES)

from .hiflow import NODE_CLASS_MAPPINGS as _HIFLOW_NODES  # noqa: E402

NODE_CLASS_MAPPINGS.update(_HIFLOW_NODES)
