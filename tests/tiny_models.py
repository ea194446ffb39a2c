"""Tiny random-weight models built from ComfyUI's own classes (see families.md §5 for the configs).

``supported_models.<Family>(unet_config)`` → ``get_model`` → random weights → ``ModelPatcher`` on the CPU. The real
axes split (head dim 128) is kept so the RoPE layout is the production one; only width and depth are tiny.
Call ``host.boot()`` first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

FLUX_CONFIG: dict[str, Any] = dict(
    image_model="flux", in_channels=16, out_channels=16, vec_in_dim=32, context_in_dim=32, hidden_size=256,
    mlp_ratio=2.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[16, 56, 56], theta=10000,
    patch_size=2, qkv_bias=True, guidance_embed=True,
)
QWEN_CONFIG: dict[str, Any] = dict(
    image_model="qwen_image", in_channels=64, out_channels=16, num_layers=1, attention_head_dim=128,
    num_attention_heads=2, joint_attention_dim=32, axes_dims_rope=[16, 56, 56],
)
TEXT_WIDTH = 32


@dataclass
class TinyFamily:
    """How to build and drive one tiny family."""

    name: str
    build: Callable[[int], Any]
    latent: Callable[[int, int, int], torch.Tensor]  # (batch, latent_h, latent_w) -> empty latent
    cond: Callable[[int, int], list]  # (n_text_tokens, seed) -> ComfyUI conditioning list
    extra: dict = field(default_factory=dict)


def _randomize(model: torch.nn.Module, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float32).to(p.dtype) * 0.05)


# image_model -> (module, dataclass) holding that family's constructor parameters
_PARAMS_CLASS = {
    "flux": ("comfy.ldm.flux.model", "FluxParams"),
    "flux2": ("comfy.ldm.flux.model", "FluxParams"),
    "chroma": ("comfy.ldm.chroma.model", "ChromaParams"),
    "chroma_radiance": ("comfy.ldm.chroma_radiance.model", "ChromaRadianceParams"),
}


def host_unet_config(unet_config: dict) -> dict:
    """``unet_config`` plus the fields this host's model classes require that older hosts lack.

    Newer hosts (the Ovis commit, after 0.3.75) made ``txt_ids_dims`` a required Flux/Chroma parameter: which id
    columns carry text positions. ``[]`` (``[3]`` for Flux.2) is the layout 0.3.75 hard-codes, so it changes nothing.
    """
    import dataclasses
    import importlib

    config = dict(unet_config)
    where = _PARAMS_CLASS.get(config.get("image_model", ""))
    if where is not None and "txt_ids_dims" not in config:
        params = getattr(importlib.import_module(where[0]), where[1])
        if "txt_ids_dims" in {f.name for f in dataclasses.fields(params)}:
            config["txt_ids_dims"] = [3] if config["image_model"] == "flux2" else []
    return config


def _build(class_name: str, unet_config: dict, seed: int):
    import comfy.model_patcher
    import comfy.supported_models

    model_config = getattr(comfy.supported_models, class_name)(host_unet_config(unet_config))
    model_config.set_inference_dtype(torch.float32, None)
    model = model_config.get_model({})
    _randomize(model, seed)
    model.eval()
    return comfy.model_patcher.ModelPatcher(model, load_device=torch.device("cpu"), offload_device=torch.device("cpu"))


def build_flux(seed: int = 0):
    return _build("Flux", FLUX_CONFIG, seed)


def build_qwen(seed: int = 0):
    return _build("QwenImage", QWEN_CONFIG, seed)


def _text(n_tokens: int, seed: int, batch: int = 1) -> torch.Tensor:
    return torch.randn(batch, n_tokens, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed))


def flux_cond(n_tokens: int = 7, seed: int = 0, guidance: float = 3.5, **extra) -> list:
    pooled = torch.randn(1, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed + 1000))
    return [[_text(n_tokens, seed), {"pooled_output": pooled, "guidance": guidance, **extra}]]


def qwen_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    return [[_text(n_tokens, seed), dict(extra)]]


FAMILIES: dict[str, TinyFamily] = {
    "flux": TinyFamily("flux", build_flux, lambda b, h, w: torch.zeros(b, 16, h, w), flux_cond),
    "qwen_image": TinyFamily("qwen_image", build_qwen, lambda b, h, w: torch.zeros(b, 16, 1, h, w), qwen_cond),
}


def sample(model, family: str, latent_hw: tuple[int, int], *, steps: int = 2, cfg: float = 1.0,
           sampler: str = "euler", scheduler: str = "simple", seed: int = 0, batch: int = 1,
           positive=None, negative=None, noise: torch.Tensor | None = None) -> torch.Tensor:
    """Run ``comfy.sample.sample`` on a tiny model with a seeded noise latent."""
    import comfy.sample

    fam = FAMILIES[family]
    latent = fam.latent(batch, *latent_hw)
    if noise is None:
        noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(seed))
    positive = positive if positive is not None else fam.cond(7, 1)
    negative = negative if negative is not None else fam.cond(5, 2)
    return comfy.sample.sample(model, noise, steps, cfg, sampler, scheduler, positive, negative, latent,
                               seed=seed, disable_pbar=True)
