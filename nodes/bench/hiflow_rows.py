"""The HiFlow row of ``bench``: a cascade against one pass at the same final size and step count, in one run.

CPU time on a tiny ComfyUI FLUX (the bench's, one head), and the FLOPs of the model calls each route actually made,
counted for FLUX.1-dev's real dimensions: 19 double + 38 single blocks of width 3072 (MLP ratio 4), 512 text
tokens, the calls' image grids mapped to the real sizes (base 1024², the swin border kept as one token). The
cascade's VAE passes (decode and encode between stages) are timed apart and counted at the FLUX VAE's real size
(vae_flops.py); the final decode at the target size is the same for both routes and left out of both.
"""

from __future__ import annotations

import statistics
import time

import torch

from .model import flux_cond, tiny_flux
from .timing import sync
from .vae_flops import vae_pass_flops

BLOCKS, WIDTH, TEXT_TOKENS = 57, 3072, 512
REAL_BASE_LATENT = 128  # FLUX.1 at 1024²: 128² latent pixels, 64² tokens


def call_flops(image_tokens: int, text_tokens: int = TEXT_TOKENS, width: int = WIDTH, blocks: int = BLOCKS) -> float:
    """One FLUX.1-dev model call: per block 24·d² FLOPs per token (QKV, output and MLP projections: 12 d² weights
    per token in the double and the single blocks alike) plus 4·N²·d for attention (QKᵀ and AV), N = text + image."""
    n = image_tokens + text_tokens
    return blocks * (24.0 * width**2 * n + 4.0 * width * n**2)


def _tiny_vae(device: torch.device):
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


def _counting(model, grids: list, seconds: list, device: torch.device, calls: dict):
    """A clone whose every model call files its latent grid (rows, cols, batch), its wall time (``seconds[0]``) and
    this process's CPU time (``seconds[1]``, a second clock: on the CPU it barely moves with other processes' load);
    ``calls`` keeps the arguments of the first call of each grid (tiny_flops replays them)."""
    import comfy.patcher_extension as ext

    def wrapper(executor, x, *args, **kwargs):
        grid = (x.shape[-2], x.shape[-1], x.shape[0])
        grids.append(grid)
        calls.setdefault(grid, (x, args, kwargs))
        start, start_cpu = time.perf_counter(), time.process_time()
        out = executor(x, *args, **kwargs)
        sync(device)
        seconds[0] += time.perf_counter() - start
        seconds[1] += time.process_time() - start_cpu
        return out

    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "hiflow_bench", wrapper)
    return clone


def _counting_vae(vae, passes: list, seconds: list, device: torch.device):
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


def _real_vae_flops(passes: list, base: int) -> float:
    """FLOPs of the VAE passes at FLUX.1's real size: a pass's latent grid scaled from the tiny base to 128²."""
    return sum(vae_pass_flops(kind, rows * REAL_BASE_LATENT // base * 8, cols * REAL_BASE_LATENT // base * 8)
               for kind, rows, cols in passes)


def _real_flops(grids: list, nominal: list[int], base: int) -> float:
    """FLOPs of the calls at FLUX.1-dev's size: a call's grid is a pass's nominal size (+2 latent px with swin)."""
    total = 0.0
    for rows, cols, batch in grids:
        size = max(n for n in nominal if n <= rows)
        pad = rows - size
        real_rows = size * REAL_BASE_LATENT // base + pad  # latent px at the real size
        real_cols = (cols - pad) * REAL_BASE_LATENT // base + pad
        total += batch * call_flops((real_rows // 2) * (real_cols // 2))
    return total


def hiflow_row(base_side: int, runs: int, device: torch.device, cfg: float = 1.0) -> dict:
    """One pass (30 euler steps at 4x) vs the official cascade (30 at 1x, 16 at 2x, 10 at 4x), interleaved after
    one untimed round of each."""
    import comfy.sample

    from ..cascade import HiFlowSettings, run_cascade

    settings = HiFlowSettings(cfg=cfg)
    base = base_side // 8
    final = int(base * settings.scales[-1])
    model = tiny_flux(1, 1, 1, device)
    positive, negative = flux_cond(16, 1), flux_cond(16, 2)
    grids = {"one pass": [], "HiFlow": []}
    in_model = {name: [0.0, 0.0] for name in grids}
    passes, in_vae = [], [0.0]
    vae = _counting_vae(_tiny_vae(device), passes, in_vae, device)
    first_calls = {}
    models = {name: _counting(model, grids[name], in_model[name], device, first_calls) for name in grids}

    def one_pass():
        latent = torch.zeros(1, 16, final, final)
        noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
        return comfy.sample.sample(models["one pass"], noise, settings.steps, cfg, "euler", "simple", positive,
                                   negative, latent, seed=0, disable_pbar=True)

    def cascade():
        latent = {"samples": torch.zeros(1, 16, base, base)}
        return run_cascade(models["HiFlow"], positive, negative, vae, latent, 0, settings).latent["samples"]

    routes = {"one pass": one_pass, "HiFlow": cascade}
    times = {name: [] for name in routes}
    model_times = {name: [] for name in routes}
    model_cpu = {name: [] for name in routes}
    vae_times = {name: [] for name in routes}
    vae_passes = {name: [] for name in routes}
    for route in routes.values():  # warm-up round, untimed: first-call work (kernels, plans, allocator) and the
        route()  # first call of each grid, whose arguments tiny_flops replays
    for round_index in range(runs):
        order = list(routes) if round_index % 2 == 0 else list(reversed(routes))
        for name in order:
            grids[name].clear()
            passes.clear()
            in_model[name][0] = in_model[name][1] = in_vae[0] = 0.0
            start = time.perf_counter()
            routes[name]()
            sync(device)
            times[name].append(time.perf_counter() - start)
            model_times[name].append(in_model[name][0])
            model_cpu[name].append(in_model[name][1])
            vae_times[name].append(in_vae[0])
            vae_passes[name] = list(passes)
    nominal = [base] + [int(base * s) for s in settings.scales]
    per_grid = tiny_flops(model, first_calls)
    return {name: {"tiny_flops": sum(per_grid[grid] for grid in grids[name]),
                   "seconds": statistics.median(v), "model_seconds": statistics.median(model_times[name]),
                   "model_cpu_seconds": statistics.median(model_cpu[name]),
                   "vae_seconds": statistics.median(vae_times[name]), "calls": len(grids[name]),
                   "no_vae_seconds": statistics.median(t - u for t, u in zip(v, vae_times[name], strict=True)),
                   "vae_passes": len(vae_passes[name]),
                   "flops": _real_flops(grids[name], nominal if name == "HiFlow" else [final], base),
                   "vae_flops": _real_vae_flops(vae_passes[name], base)}
            for name, v in times.items()}
