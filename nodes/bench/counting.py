"""What the cascades' bench row counts on the tiny models: each model call's latent grid, wall and CPU time (and the
first call's arguments, replayed under PyTorch's FLOP counter), each VAE pass's kind, grid and wall time."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from .timing import sync

#: A hook entered around each model call of a route: ``span(route, round)`` (hiflow_rows.hiflow_row).
Span = Callable[[str, int], AbstractContextManager]


def tiny_vae(device: torch.device):
    import comfy.sd
    from comfy.ldm.models.autoencoder import AutoencoderKL

    params = {"embed_dim": 16, "ddconfig": {
        "double_z": True, "z_channels": 16, "resolution": 256, "in_channels": 3, "out_ch": 3, "ch": 32,
        "ch_mult": [1, 1, 2, 2], "num_res_blocks": 1, "attn_resolutions": [], "dropout": 0.0}}
    module = AutoencoderKL(**params)
    gen = torch.Generator().manual_seed(0)
    sd = {k: torch.randn(v.shape, generator=gen) / max(1, v[0].numel()) ** 0.5 if v.ndim > 1 else
          (1.0 if k.endswith("weight") else 0.0) + 0.02 * torch.randn(v.shape, generator=gen)
          for k, v in module.state_dict().items()}
    vae = comfy.sd.VAE(sd=sd, config={"params": params}, device=device)
    vae.latent_channels = 16
    return vae


def attention_of(options: dict | None) -> tuple[bool, object]:
    """What a model call's attention runs, read from its options as the HRDiT stage clone's own wrapper reads them
    (nodes/rope_patch/attention_clone.py): whether SPA is on at the call's step, and the plan's kernel (HAP's, with
    its ``plan`` and ``anchor``; None: dense)."""
    from ..rope_patch.spa import ATTENTION_KEY, RUN_STEP_KEY, AttentionPlan
    from ..rope_patch.stage_step import stage_step

    options = options or {}
    plan = options.get(ATTENTION_KEY)
    if not isinstance(plan, AttentionPlan):
        return False, None
    told = stage_step(options)
    step = told.step if told is not None else int(options.get(RUN_STEP_KEY, 0))
    return plan.spa_on(step), plan.kernel


def counting(model, grids: list, seconds: list, device: torch.device, calls: dict, attention: list | None = None,
             span: Callable[[], AbstractContextManager] | None = None):
    """A clone whose every model call files its latent grid and text (rows, cols, batch, text tokens), its wall time
    (``seconds[0]``) and this process's CPU time (``seconds[1]``, a second clock: on the CPU it barely moves with
    other processes' load); ``calls`` keeps the arguments of the first call of each grid (tiny_flops replays them);
    ``attention`` (when given) gets each call's ``attention_of``, in the order of ``grids``; ``span`` (when given) is
    entered around the call itself.
    The text is what reaches the model: a wrapper of ``model`` that repeats it (text duplication) runs outside."""
    import comfy.patcher_extension as ext

    def wrapper(executor, x, *args, **kwargs):
        text = args[2].shape[1] if len(args) > 2 and args[2] is not None else 0  # (t, c_concat, c_crossattn, ...)
        grid = (x.shape[-2], x.shape[-1], x.shape[0], text)
        grids.append(grid)
        if attention is not None:
            options = args[4] if len(args) > 4 else kwargs.get("transformer_options")
            attention.append(attention_of(options))
        calls.setdefault(grid, (x, args, kwargs))
        start, start_cpu = time.perf_counter(), time.process_time()
        with span() if span is not None else contextlib.nullcontext():
            out = executor(x, *args, **kwargs)
            sync(device)
        seconds[0] += time.perf_counter() - start
        seconds[1] += time.process_time() - start_cpu
        return out

    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "cascade_bench", wrapper)
    return clone


def counting_vae(vae, passes: list, seconds: list, device: torch.device):
    """The bench's own tiny VAE, its encode / decode filing (kind, latent rows, latent cols) and their wall time."""
    def timed(kind: str, method):
        def run(data):
            start = time.perf_counter()
            out = method(data)
            sync(device)
            seconds[0] += time.perf_counter() - start
            latent = out if kind == "encode" else data
            passes.append((kind, latent.shape[-2], latent.shape[-1]))
            return out
        return run

    vae.encode, vae.decode = timed("encode", vae.encode), timed("decode", vae.decode)
    return vae


def _cpu_flash_attention_flops(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    from torch.utils.flop_counter import sdpa_flop_count

    return sdpa_flop_count(query_shape, key_shape, value_shape)


def tiny_flops(model, calls: dict) -> dict:
    """FLOPs of one call of the tiny model at each filed grid, counted: the first call's arguments replayed through
    the BaseModel's own apply_model (no wrappers, the stock table: RoPE tables are not matrix work) under
    FlopCounterMode. Matrix products, convolutions and attention; PyTorch's counter has no formula for the CPU's
    flash attention, so that one is given (the same formula as its CUDA kernels')."""
    from torch.utils.flop_counter import FlopCounterMode

    mapping = {}
    cpu_flash = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if cpu_flash is not None:
        mapping[cpu_flash] = _cpu_flash_attention_flops
    flops = {}
    with torch.no_grad():
        for grid, (x, args, kwargs) in calls.items():
            t, c_concat, c_crossattn, control = args[:4]
            with FlopCounterMode(display=False, custom_mapping=mapping) as counter:
                model.model.apply_model(x, t, c_concat, c_crossattn, control, {}, **kwargs)
            flops[grid] = float(counter.get_total_flops())
    return flops
