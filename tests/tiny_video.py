"""Tiny random-weight video DiTs from ComfyUI's own classes (families.md §5), driven by a real sampler on 5-D latents.

Kept beside ``tiny_models`` (same build path: ``supported_models.<Class>(unet_config)`` → ``get_model`` → random
weights → ``ModelPatcher`` on the CPU) because video families need (B, C, T, H, W) latents and their own conds.
The real head dim 128 keeps the production RoPE split: Wan [44, 42, 42], HunyuanVideo [16, 56, 56].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tiny_configs
import tiny_models
import torch

TEXT_WIDTH = tiny_configs.TEXT_WIDTH
CLIP_VISION_WIDTH = 1280  # Wan I2V's MLPProj input (clip vision penultimate hidden states)

_WAN21: dict[str, Any] = dict(
    image_model="wan2.1", model_type="t2v", patch_size=[1, 2, 2], dim=256, ffn_dim=256, freq_dim=256,
    text_dim=TEXT_WIDTH, in_dim=16, out_dim=16, num_heads=2, num_layers=1, window_size=[-1, -1], qk_norm=True,
    cross_attn_norm=True, eps=1e-6,
)
_HUNYUAN_VIDEO: dict[str, Any] = dict(
    image_model="hunyuan_video", in_channels=16, out_channels=16, vec_in_dim=TEXT_WIDTH, context_in_dim=TEXT_WIDTH,
    hidden_size=256, mlp_ratio=2.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[16, 56, 56], theta=256,
    patch_size=[1, 2, 2], qkv_bias=True, guidance_embed=True, byt5=False, meanflow=False,
    use_cond_type_embedding=False, vision_in_dim=None,
)


@dataclass(frozen=True)
class TinyVideo:
    """One tiny video family: its ComfyUI class and config, latent channels, patch and the RoPE facts tests check."""

    name: str
    class_name: str
    config: dict
    channels: int
    cond: Callable[..., list]
    embedder_attr: str
    axes_dim: tuple[int, ...]
    theta: float
    px_per_token: int = 16
    patch: int = 2  # latent pixels per token (rows and cols; frames are 1:1)
    adapter: str = ""  # the pack adapter the tiny model must be detected as


def _text(n_tokens: int, seed: int) -> torch.Tensor:
    return torch.randn(1, n_tokens, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed))


def wan_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    return [[_text(n_tokens, seed), dict(extra)]]


def hunyuan_video_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    pooled = torch.randn(1, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed + 1000))
    return [[_text(n_tokens, seed), {"pooled_output": pooled, "guidance": 6.0, **extra}]]


def no_pooled_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    """HunyuanVideo 1.5: no CLIP-L pooled vector (the key must exist), default guidance."""
    return [[_text(n_tokens, seed), {"pooled_output": None, **extra}]]


def clip_vision_output(seed: int = 0, tokens: int = 257):
    """A clip-vision output as CLIPVisionEncode returns it (only the field Wan I2V reads)."""
    import comfy.clip_vision

    out = comfy.clip_vision.Output()
    out["penultimate_hidden_states"] = torch.randn(1, tokens, CLIP_VISION_WIDTH,
                                                   generator=torch.Generator().manual_seed(seed + 3000))
    return out


_WAN_FACTS = dict(embedder_attr="diffusion_model.rope_embedder", axes_dim=(44, 42, 42), theta=10000.0)

FAMILIES: dict[str, TinyVideo] = {
    "wan21": TinyVideo("wan21", "WAN21_T2V", _WAN21, 16, wan_cond, adapter="wan_14b", **_WAN_FACTS),
    "wan21_i2v": TinyVideo("wan21_i2v", "WAN21_I2V", dict(_WAN21, model_type="i2v", in_dim=36), 16, wan_cond,
                           adapter="wan_14b", **_WAN_FACTS),
    "wan22_5b": TinyVideo("wan22_5b", "WAN22_T2V", dict(_WAN21, in_dim=48, out_dim=48), 48, wan_cond,
                          px_per_token=32, adapter="wan22_5b", **_WAN_FACTS),
    "hunyuan_video": TinyVideo("hunyuan_video", "HunyuanVideo", _HUNYUAN_VIDEO, 16, hunyuan_video_cond,
                               embedder_attr="diffusion_model.pe_embedder", axes_dim=(16, 56, 56), theta=256.0,
                               adapter="hunyuan_video"),
    "hunyuan_video15": TinyVideo("hunyuan_video15", "HunyuanVideo15", dict(
        _HUNYUAN_VIDEO, in_channels=65, out_channels=32, vec_in_dim=None, patch_size=[1, 1, 1], guidance_embed=False,
        use_cond_type_embedding=True, vision_in_dim=1152), 32, no_pooled_cond, patch=1,
        embedder_attr="diffusion_model.pe_embedder", axes_dim=(16, 56, 56), theta=256.0, adapter="hunyuan_video15"),
}


def host_config(family: str) -> tuple[str, dict]:
    """(supported_models class, unet_config), with the params fields newer hosts require where they exist."""
    import dataclasses
    import importlib

    fam = FAMILIES[family]
    config = dict(fam.config)
    if fam.class_name.startswith("HunyuanVideo"):
        module = importlib.import_module("comfy.ldm.hunyuan_video.model")
        names = {f.name for f in dataclasses.fields(module.HunyuanVideoParams)}
        config.update({k: v for k, v in tiny_configs._NEWER_PARAMS.items() if k in names and k not in config})
    return fam.class_name, config


def build(family: str, seed: int = 0, **config_overrides):
    class_name, config = host_config(family)
    return tiny_models._build(class_name, dict(config, **config_overrides), seed)


def latent(family: str, frames: int, rows: int, cols: int, batch: int = 1) -> torch.Tensor:
    """An empty (B, C, T, H, W) latent of ``frames`` latent frames and rows x cols tokens."""
    fam = FAMILIES[family]
    return torch.zeros(batch, fam.channels, frames, rows * fam.patch, cols * fam.patch)


def sample(model, family: str, tokens: tuple[int, int], *, frames: int = 2, steps: int = 2, cfg: float = 1.0,
           sampler: str = "euler", scheduler: str = "simple", seed: int = 0, batch: int = 1, positive=None,
           negative=None, latent_image: torch.Tensor | None = None, noise: torch.Tensor | None = None,
           start_step: int | None = None, last_step: int | None = None, force_full_denoise: bool = False,
           noise_mask: torch.Tensor | None = None) -> torch.Tensor:
    """``comfy.sample.sample`` on a 5-D latent of ``frames`` x ``tokens`` (rows, cols), seeded noise."""
    import comfy.sample

    fam = FAMILIES[family]
    if latent_image is None:
        latent_image = latent(family, frames, *tokens, batch=batch)
    if noise is None:
        noise = torch.randn(latent_image.shape, generator=torch.Generator().manual_seed(seed))
    positive = positive if positive is not None else fam.cond(7, 1)
    negative = negative if negative is not None else fam.cond(7, 2)  # same length: one batched call per step
    return comfy.sample.sample(model, noise, steps, cfg, sampler, scheduler, positive, negative, latent_image,
                               start_step=start_step, last_step=last_step, force_full_denoise=force_full_denoise,
                               noise_mask=noise_mask, seed=seed, disable_pbar=True)
