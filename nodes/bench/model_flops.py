"""FLOPs of one FLUX.1-dev model call at a real size, counted, not estimated: ComfyUI's own Flux built with FLUX.1-dev's
config on the ``meta`` device (no weights, no memory; 11.9 B parameters) and run under
``torch.utils.flop_counter.FlopCounterMode``. The second measure of the cascades' rows, whose FLOPs come from a
formula (hiflow_rows.call_flops); the attention goes through ComfyUI's attention override to its plain
``attention_pytorch`` (the host's default on the CPU probes free memory, which ``meta`` cannot; the FLOPs are the same
QKᵀ and AV).

FLUX.1-dev's config is what ComfyUI detects from its checkpoint (comfy/model_detection.py: 19 double and 38 single
blocks, width 3072, 24 heads, MLP ratio 4, T5 context 4096, pooled vector 768, guidance embedding).
"""

from __future__ import annotations

import dataclasses
from functools import cache

import torch

FLUX_DEV = dict(image_model="flux", in_channels=16, out_channels=16, vec_in_dim=768, context_in_dim=4096,
                hidden_size=3072, mlp_ratio=4.0, num_heads=24, depth=19, depth_single_blocks=38, axes_dim=[16, 56, 56],
                theta=10000, patch_size=2, qkv_bias=True, guidance_embed=True)
BLOCKS = FLUX_DEV["depth"] + FLUX_DEV["depth_single_blocks"]  # 57: every block attends once per call
WIDTH, HEADS = FLUX_DEV["hidden_size"], FLUX_DEV["num_heads"]
#: NVIDIA H100 SXM, bf16 Tensor Core peak without sparsity, FLOP/s: the datasheet's 1,979 TFLOPS is "with sparsity",
#: twice the dense rate (NVIDIA H100 Tensor Core GPU datasheet; the Hopper architecture whitepaper gives 989.4).
H100_SXM_BF16_DENSE = 989.4e12
#: NVIDIA GeForce RTX 4090, bf16 Tensor Core peak with FP32 accumulate, dense (NVIDIA Ada GPU architecture
#: whitepaper, appendix table: 165.2, 330.4 with sparsity); ComfyUI computes fp8 weights in bf16 by default.
RTX_4090_BF16_DENSE = 165.2e12


def flux_config(**config) -> dict:
    """A Flux config for this host's FluxParams: the fields newer ComfyUIs added, at FLUX.1's values, where it has
    them."""
    import comfy.ldm.flux.model

    fields = {f.name for f in dataclasses.fields(comfy.ldm.flux.model.FluxParams)}
    newer = dict(txt_ids_dims=[], vec_in_dim=None, use_x0=False, use_sequential_txt_ids=False, meanflow_sum=False)
    return {**config, **{k: v for k, v in newer.items() if k in fields and k not in config}}


def _plain_attention(func, *args, **kwargs):
    from comfy.ldm.modules.attention import attention_pytorch

    return attention_pytorch(*args, **kwargs)


@cache
def flux_dev_call_flops(side_px: int, text_tokens: int = 512) -> float:
    """FLOPs of one FLUX.1-dev call on a side x side px latent (batch 1) with ``text_tokens`` T5 tokens."""
    import comfy.ldm.flux.model
    import comfy.ops
    from torch.utils.flop_counter import FlopCounterMode

    model = comfy.ldm.flux.model.Flux(**flux_config(**FLUX_DEV), device="meta", dtype=torch.bfloat16,
                                      operations=comfy.ops.disable_weight_init)
    with torch.device("meta"):
        x = torch.empty(1, 16, side_px // 8, side_px // 8, dtype=torch.bfloat16)
        context = torch.empty(1, text_tokens, FLUX_DEV["context_in_dim"], dtype=torch.bfloat16)
        pooled = torch.empty(1, FLUX_DEV["vec_in_dim"], dtype=torch.bfloat16)
        t, guidance = torch.empty(1, dtype=torch.bfloat16), torch.empty(1, dtype=torch.bfloat16)
    options = {"optimized_attention_override": _plain_attention}
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(x, t, context, pooled, guidance=guidance, transformer_options=options)
    return float(counter.get_total_flops())
