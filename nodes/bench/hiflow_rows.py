"""The cascades' row of ``bench``: the HiFlow and I-Max cascades against one pass at the same final size and step
count, the three routes interleaved in one run.

CPU time on a tiny ComfyUI FLUX (the bench's, one head), and the FLOPs of the model calls each route actually made,
counted for FLUX.1-dev's real dimensions: 19 double + 38 single blocks of width 3072 (MLP ratio 4), 512 text
tokens (I-Max's text duplication: 512 per prompt copy, one copy per 64 x 64 tokens of the call), the calls' image
grids mapped to the real sizes (base 1024², the swin border kept as one token). The cascades' VAE passes (decode
and encode between passes) are timed apart and counted at the FLUX VAE's real size (vae_flops.py); the final decode
at the target size is the same for every route and left out of all.

The tiny I-Max run gives its stage model the tiny base as its trained grid, so text duplication puts down as many
prompt copies as at the real size (4 x 4 at 4x); the real-size count does the same with FLUX.1's 64 x 64.
"""

from __future__ import annotations

import statistics
import time

import torch

from .counting import counting, counting_vae, tiny_flops, tiny_vae
from .model import flux_cond, tiny_flux
from .timing import sync
from .vae_flops import vae_pass_flops

BLOCKS, WIDTH, TEXT_TOKENS = 57, 3072, 512
REAL_BASE_LATENT = 128  # FLUX.1 at 1024²: 128² latent pixels, 64² tokens
TRAINED_TOKENS = 64  # FLUX.1's trained grid per side: I-Max's text duplication puts one prompt copy per 64 x 64
ROUTES = ("one pass", "HiFlow", "I-Max")


def call_flops(image_tokens: int, text_tokens: int = TEXT_TOKENS, width: int = WIDTH, blocks: int = BLOCKS) -> float:
    """One FLUX.1-dev model call: per block 24·d² FLOPs per token (QKV, output and MLP projections: 12 d² weights
    per token in the double and the single blocks alike) plus 4·N²·d for attention (QKᵀ and AV), N = text + image."""
    n = image_tokens + text_tokens
    return blocks * (24.0 * width**2 * n + 4.0 * width * n**2)


def _real_vae_flops(passes: list, base: int) -> float:
    """FLOPs of the VAE passes at FLUX.1's real size: a pass's latent grid scaled from the tiny base to 128²."""
    return sum(vae_pass_flops(kind, rows * REAL_BASE_LATENT // base * 8, cols * REAL_BASE_LATENT // base * 8)
               for kind, rows, cols in passes)


def _real_flops(grids: list, nominal: list[int], base: int, duplicated: bool = False) -> float:
    """FLOPs of the calls at FLUX.1-dev's size: a call's grid is a pass's nominal size (+2 latent px with swin);
    ``duplicated``: 512 text tokens per prompt copy (I-Max's text duplication at the real grid)."""
    total = 0.0
    for rows, cols, batch, _ in grids:
        size = max(n for n in nominal if n <= rows)
        pad = rows - size
        real_rows = size * REAL_BASE_LATENT // base + pad  # latent px at the real size
        real_cols = (cols - pad) * REAL_BASE_LATENT // base + pad
        tokens = (real_rows // 2, real_cols // 2)
        copies = max(1, tokens[0] // TRAINED_TOKENS) * max(1, tokens[1] // TRAINED_TOKENS) if duplicated else 1
        total += batch * call_flops(tokens[0] * tokens[1], TEXT_TOKENS * copies)
    return total


def hiflow_row(base_side: int, runs: int, device: torch.device, cfg: float = 1.0) -> dict:
    """One pass (30 euler steps at 4x) vs the official HiFlow cascade (30 at 1x, 16 at 2x, 10 at 4x) vs the official
    I-Max cascade (30 at 1x, 30 at 4x from noise), interleaved after one untimed round of each."""
    import comfy.sample

    from ..cascade import HiFlowSettings, ImaxSettings, run_cascade
    from ..cascade.families import cascade_family
    from ..cascade.imax_model import imax_stage_model

    settings = {"HiFlow": HiFlowSettings(cfg=cfg), "I-Max": ImaxSettings(cfg=cfg)}
    base = base_side // 8
    final = int(base * settings["HiFlow"].scales[-1])
    assert final == int(base * settings["I-Max"].scales[-1])  # both official routes end at 4x
    model = tiny_flux(1, 1, 1, device)
    positive, negative = flux_cond(16, 1), flux_cond(16, 2)
    grids = {name: [] for name in ROUTES}
    in_model = {name: [0.0, 0.0] for name in ROUTES}
    passes, in_vae = [], [0.0]
    vae = counting_vae(tiny_vae(device), passes, in_vae, device)
    first_calls = {}
    models = {name: counting(model, grids[name], in_model[name], device, first_calls) for name in ROUTES}
    official = settings["I-Max"]
    imax_stage = counting(imax_stage_model(model, cascade_family(model, "bench"), official.ntk_factor[0], True, True,
                                           trained=(base / 2, base / 2)), grids["I-Max"], in_model["I-Max"], device,
                          first_calls)

    def one_pass():
        latent = torch.zeros(1, 16, final, final)
        noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
        return comfy.sample.sample(models["one pass"], noise, settings["HiFlow"].steps, cfg, "euler", "simple",
                                   positive, negative, latent, seed=0, disable_pbar=True)

    def cascade(name: str):
        def run():
            latent = {"samples": torch.zeros(1, 16, base, base)}
            stage = imax_stage if name == "I-Max" else None
            return run_cascade(models[name], positive, negative, vae, latent, 0, settings[name],
                               stage_model=stage).latent["samples"]
        return run

    routes = {"one pass": one_pass, "HiFlow": cascade("HiFlow"), "I-Max": cascade("I-Max")}
    times, model_times, model_cpu, vae_times = ({name: [] for name in routes} for _ in range(4))
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
    nominal = {"one pass": [final], "HiFlow": [base] + [int(base * s) for s in settings["HiFlow"].scales],
               "I-Max": [base] + [int(base * s) for s in official.scales]}
    per_grid = tiny_flops(model, first_calls)
    return {name: {"tiny_flops": sum(per_grid[grid] for grid in grids[name]),
                   "seconds": statistics.median(v), "model_seconds": statistics.median(model_times[name]),
                   "model_cpu_seconds": statistics.median(model_cpu[name]),
                   "vae_seconds": statistics.median(vae_times[name]), "calls": len(grids[name]),
                   "no_vae_seconds": statistics.median(t - u for t, u in zip(v, vae_times[name], strict=True)),
                   "vae_passes": len(vae_passes[name]),
                   "flops": _real_flops(grids[name], nominal[name], base, duplicated=name == "I-Max"),
                   "vae_flops": _real_vae_flops(vae_passes[name], base)}
            for name, v in times.items()}
