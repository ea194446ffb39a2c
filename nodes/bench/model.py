"""What the bench runs: ComfyUI (booted on CUDA when present, else the CPU) and its own Flux with tiny random
weights, patched as the nodes patch it, sampled with ComfyUI's sampler."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys

import torch

from ...rope import PositionSchedule
from ...spectral import SegaSettings
from ..rope_patch.clone import patch_model
from .model_flops import FLUX_DEV, flux_config
from .sources import PACK_ROOT

#: The SEGA recipes the bench times: "refined" (the latent's FFT; the per-step FFT counted in run_facts.py and the
#: recipe of the whole-sampling row) and "paper", the SEGA node's default (the spectrum of the model's patch
#: embedding over the latent: the per-call table times both, and their peak memory).
REFINED = SegaSettings(recipe="refined")
PAPER = SegaSettings()
assert PAPER.recipe == "paper"
FLUX_AXES, THETA = [16, 56, 56], 10000
SMALL_BASE_PX = 256  # trained size given to the tiny model of the count and compile checks, sampled at 512²


def boot() -> None:
    """Import ComfyUI (``COMFYUI_PATH`` first), on the CPU unless CUDA is there."""
    root = os.environ.get("COMFYUI_PATH")
    if root and root not in sys.path:
        sys.path.insert(0, root)
    if importlib.util.find_spec("torchvision") is None and (PACK_ROOT / "tests" / "stubs.py").is_file():
        # The pack's test venv has no torchvision; ComfyUI imports it at load time from code the bench never runs.
        sys.path.insert(0, str(PACK_ROOT / "tests"))
        importlib.import_module("stubs").install()
    import comfy.cli_args

    if not torch.cuda.is_available():
        comfy.cli_args.args.cpu = True
    import comfy.model_management  # noqa: F401  (after args.cpu)


def tiny_flux(depth: int, single: int, heads: int, device: torch.device):
    """ComfyUI's own Flux (head dim 128, axes 16/56/56) with random weights: ``depth`` double and ``single`` single
    blocks of ``heads`` heads."""
    import comfy.ldm.flux.model
    import comfy.model_patcher
    import comfy.supported_models

    config = flux_config(image_model="flux", in_channels=16, out_channels=16, vec_in_dim=32, context_in_dim=32,
                         hidden_size=128 * heads, mlp_ratio=2.0, num_heads=heads, depth=depth,
                         depth_single_blocks=single, axes_dim=FLUX_AXES, theta=THETA, patch_size=2, qkv_bias=True,
                         guidance_embed=True)
    model_config = comfy.supported_models.Flux(config)
    model_config.set_inference_dtype(torch.float32, None)
    model = model_config.get_model({})
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
    model.eval()
    return comfy.model_patcher.ModelPatcher(model, load_device=device, offload_device=device)


@functools.cache
def embedding_model(family: str, device: torch.device):
    """The family's ComfyUI BaseModel at its production width with no transformer blocks: what recipe paper's
    spectrum reads (its model_sampling, inference dtype and patch embedding ``img_in``, Linear 64 -> 3072 in Flux.1
    and Qwen-Image), the embedding's weights random (the rest is never run)."""
    import comfy.supported_models

    if family == "flux":
        model_config = comfy.supported_models.Flux(flux_config(**{**FLUX_DEV, "depth": 0, "depth_single_blocks": 0}))
    elif family == "qwen_image":
        model_config = comfy.supported_models.QwenImage({"image_model": "qwen_image", "num_layers": 0})
    else:
        raise ValueError(f"bench: no embedding model for the family {family!r} (flux, qwen_image)")
    model_config.set_inference_dtype(torch.float32, None)
    model = model_config.get_model({}, device=device)
    layer = model.diffusion_model.img_in
    with torch.no_grad():
        layer.weight.normal_(0.0, 0.02, generator=torch.Generator(device=device).manual_seed(0))
        layer.bias.zero_()
    return model.eval()


def flux_cond(tokens: int, seed: int) -> list:
    gen = torch.Generator().manual_seed(seed)
    return [[torch.randn(1, tokens, 32, generator=gen), {"pooled_output": torch.randn(1, 32, generator=gen),
                                                         "guidance": 3.5}]]


def patched(model, sega: bool = False, base_px: float = 0):
    """DyPE (official defaults), optionally + SEGA, trained at ``base_px`` (0: the family's 1024)."""
    model = patch_model(model, lambda c: c.with_positions(PositionSchedule(), base_px))
    return patch_model(model, lambda c: c.with_sega(REFINED, base_px)) if sega else model


def sample(model, side: int, steps: int, cfg: float, negative_tokens: int = 16) -> torch.Tensor:
    import comfy.sample

    latent = torch.zeros(1, 16, side // 8, side // 8)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    return comfy.sample.sample(model, noise, steps, cfg, "euler", "simple", flux_cond(16, 1),
                               flux_cond(negative_tokens, 2), latent, seed=0, disable_pbar=True)
