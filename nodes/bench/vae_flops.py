"""FLOPs of one pass of FLUX.1's VAE at a real size, counted, not estimated: ComfyUI's own Encoder / Decoder built
with the FLUX VAE's config on the ``meta`` device (no weights, no memory) and run under
``torch.utils.flop_counter.FlopCounterMode`` (convolutions and the mid-block attention's matmuls). The attention
blocks of this meta copy use the plain softmax(q kᵀ / sqrt(C)) v below (2 matmuls, what every ComfyUI VAE attention
computes) instead of the host's choice, whose memory probing cannot run on ``meta``.

The config is ComfyUI's default AutoencoderKL ddconfig (comfy/sd.py: ch 128, ch_mult 1, 2, 4, 4, two res blocks,
no attention resolutions besides the mid block) with z_channels 16, which ComfyUI reads from ae.safetensors.
"""

from __future__ import annotations

from functools import cache

import torch

FLUX_VAE = {"double_z": True, "z_channels": 16, "resolution": 256, "in_channels": 3, "out_ch": 3, "ch": 128,
            "ch_mult": [1, 2, 4, 4], "num_res_blocks": 2, "attn_resolutions": [], "dropout": 0.0}
FLUX_VAE_DOWNSCALE = 8  # pixels per latent pixel


def _plain_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    b, c, h, w = q.shape
    scores = torch.bmm(q.reshape(b, c, h * w).transpose(1, 2), k.reshape(b, c, h * w)) * c**-0.5
    return torch.bmm(v.reshape(b, c, h * w), scores.softmax(-1).transpose(1, 2)).reshape(b, c, h, w)


@cache
def vae_pass_flops(kind: str, rows_px: int, cols_px: int) -> float:
    """FLOPs of one FLUX.1 VAE ``encode`` or ``decode`` of a rows x cols px image (one image)."""
    from comfy.ldm.modules.diffusionmodules.model import Decoder, Encoder
    from torch.utils.flop_counter import FlopCounterMode

    if kind not in ("encode", "decode"):
        raise ValueError(f"vae_pass_flops: kind must be 'encode' or 'decode', got {kind!r}")
    with torch.device("meta"):
        if kind == "encode":
            net, x = Encoder(**FLUX_VAE), torch.empty(1, 3, rows_px, cols_px)
        else:
            net = Decoder(**FLUX_VAE)
            x = torch.empty(1, FLUX_VAE["z_channels"], rows_px // FLUX_VAE_DOWNSCALE, cols_px // FLUX_VAE_DOWNSCALE)
    for module in net.modules():
        if hasattr(module, "optimized_attention"):
            module.optimized_attention = _plain_attention  # this meta copy's own attribute
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net(x)
    return float(counter.get_total_flops())
