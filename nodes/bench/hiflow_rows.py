"""The cascades' row of ``bench``: the HiFlow, I-Max and HRDiT cascades against one pass at the same final size and
step count, the four routes interleaved in one run.

CPU time on a tiny ComfyUI FLUX (the bench's, one head), and the FLOPs of the model calls each route actually made,
counted for FLUX.1-dev's real dimensions: 19 double + 38 single blocks of width 3072 (MLP ratio 4), 512 text
tokens (I-Max's text duplication: 512 per prompt copy, one copy per 64 x 64 tokens of the call), the calls' image
grids mapped to the real sizes (base 1024², the swin border kept as one token). The cascades' VAE passes (decode
and encode between passes) are timed apart and counted at the FLUX VAE's real size (vae_flops.py); the final decode
at the target size is the same for every route and left out of all.

The tiny I-Max run gives its stage model the tiny base as its trained grid, so text duplication puts down as many
prompt copies as at the real size (4 x 4 at 4x); the real-size count does the same with FLUX.1's 64 x 64.

HRDiT's calls are counted as its stage clones run them (counting.attention_of): on an SPA step every block attends
once per SPA variant of the call's real grid (official group_num 80: 3 at 2048²), and in every stage call each
attention covers HAP's kept entries only (nodes/hap/masks.py kept_share at the call's real sequence, 57 layers x 24
heads, text rows and columns kept). The tiny run gets the group_num that gives its grids the real variant counts;
its HAP band (31 blocks of 64 tokens either side) keeps (nearly) every tiny token, so HAP's blockwise kernel on the
CPU computes (nearly) every entry: its times include no saving from HAP.
HAP's attention is counted two ways (hap_cost.py): over the entries its mask keeps, and over the whole
128 x 128 tiles FlexAttention computes on a GPU.
"""

from __future__ import annotations

import statistics
import time

import torch

from ...rope.spa import variant_count
from .counting import Span, counting, counting_vae, tiny_flops, tiny_vae
from .hap_cost import hap_share
from .model import flux_cond, tiny_flux
from .model_flops import BLOCKS, WIDTH, flux_dev_call_flops
from .timing import sync
from .vae_flops import vae_pass_flops

TEXT_TOKENS = 512
REAL_BASE_LATENT = 128  # FLUX.1 at 1024²: 128² latent pixels, 64² tokens
TRAINED_TOKENS = 64  # FLUX.1's trained grid per side: I-Max's text duplication puts one prompt copy per 64 x 64
ROUTES = ("one pass", "HiFlow", "I-Max", "HRDiT")
GROUP_NUM = 80  # HRDiT's official SPA bundles per axis (HrditSettings' default): the real size's variants


def call_flops(image_tokens: int, text_tokens: int = TEXT_TOKENS, width: int = WIDTH, blocks: int = BLOCKS,
               attention: float = 1.0) -> float:
    """One FLUX.1-dev model call: per block 24·d² FLOPs per token (QKV, output and MLP projections: 12 d² weights
    per token in the double and the single blocks alike) plus 4·N²·d for attention (QKᵀ and AV), N = text + image;
    ``attention`` multiplies the attention term (HRDiT: SPA's variants x HAP's kept share)."""
    n = image_tokens + text_tokens
    return blocks * (24.0 * width**2 * n + attention * 4.0 * width * n**2)


def attention_factor(record: tuple[bool, object], tokens: tuple[int, int], text: int, hap: str = "entries",
                     group_num: int = GROUP_NUM) -> float:
    """A call's attention term over the dense one: SPA attends once per variant of the call's real token grid with
    the official ``group_num`` (spa_attention.py: q and k rotated per variant, attention per variant, outputs
    averaged; the projections run once), each over HAP's share (text rows and columns kept, as its mask keeps them).
    ``hap``: "entries" (the kept entries), "tiles" (the whole 128 x 128 tiles FlexAttention computes, hap_cost.py)
    or "dense" (HAP counted as dense attention)."""
    spa, kernel = record
    variants = variant_count(tokens[0], tokens[1], group_num) if spa else 1
    if kernel is None or hap == "dense":
        return float(variants)
    return variants * hap_share(kernel.plan, kernel.anchor, tokens[0] * tokens[1] + text, text, hap == "tiles")


def _real_vae_flops(passes: list, base: int) -> float:
    """FLOPs of the VAE passes at FLUX.1's real size: a pass's latent grid scaled from the tiny base to 128²."""
    return sum(vae_pass_flops(kind, rows * REAL_BASE_LATENT // base * 8, cols * REAL_BASE_LATENT // base * 8)
               for kind, rows, cols in passes)


def real_tokens(grid: tuple, nominal: list[int], base: int) -> tuple[int, int]:
    """A tiny call's token grid at FLUX.1-dev's size: its pass's nominal size (+2 latent px with swin) scaled."""
    rows, cols = grid[:2]
    size = max(n for n in nominal if n <= rows)
    pad = rows - size
    real_rows = size * REAL_BASE_LATENT // base + pad  # latent px at the real size
    real_cols = (cols - pad) * REAL_BASE_LATENT // base + pad
    return real_rows // 2, real_cols // 2


def real_flops(grids: list, nominal: list[int], base: int, duplicated: bool = False, attention: list | None = None,
               hap: str = "entries") -> float:
    """FLOPs of the calls at FLUX.1-dev's size (real_tokens); ``duplicated``: 512 text tokens per prompt copy
    (I-Max's text duplication at the real grid); ``attention``: each call's (SPA on, attention kernel)
    (counting.attention_of), its attention term by attention_factor (``hap``: how HAP's share is counted)."""
    total = 0.0
    records = attention if attention is not None else [(False, None)] * len(grids)
    for grid, record in zip(grids, records, strict=True):
        tokens = real_tokens(grid, nominal, base)
        copies = max(1, tokens[0] // TRAINED_TOKENS) * max(1, tokens[1] // TRAINED_TOKENS) if duplicated else 1
        text = TEXT_TOKENS * copies
        total += grid[2] * call_flops(tokens[0] * tokens[1], text,
                                      attention=attention_factor(record, tokens, text, hap))
    return total


def real_attention(grids: list, attention: list, nominal: list[int], base: int) -> dict:
    """HRDiT's calls by kind at FLUX.1-dev's size: (token rows, cols, SPA variants, HAP's kept share of the entries,
    of the 128 x 128 tiles) -> calls."""
    kinds: dict = {}
    for grid, (spa, kernel) in zip(grids, attention, strict=True):
        tokens = real_tokens(grid, nominal, base)
        variants = variant_count(tokens[0], tokens[1], GROUP_NUM) if spa else 1
        sequence = tokens[0] * tokens[1] + TEXT_TOKENS
        kept = (1.0, 1.0) if kernel is None else tuple(
            hap_share(kernel.plan, kernel.anchor, sequence, TEXT_TOKENS, tiles) for tiles in (False, True))
        key = (*tokens, variants, *kept)
        kinds[key] = kinds.get(key, 0) + grid[2]
    return kinds


def tiny_group_num(tiny_sides: list[int], real_sides: list[int], group_num: int) -> int:
    """SPA's bundles per axis on the tiny model: the smallest that gives each stage's tiny token grid as many SPA
    variants as ``group_num`` gives the real one (so the tiny run attends as often), else ``group_num`` itself."""
    wanted = [variant_count(side, side, group_num) for side in real_sides]
    for candidate in range(2, group_num + 1):
        if [variant_count(side, side, candidate) for side in tiny_sides] == wanted:
            return candidate
    return group_num


def hiflow_row(base_side: int, runs: int, device: torch.device, cfg: float = 1.0, span: Span | None = None) -> dict:
    """One pass (30 euler steps at 4x) vs the official HiFlow cascade (30 at 1x, 16 at 2x, 10 at 4x) vs the official
    I-Max cascade (30 at 1x, 30 at 4x from noise) vs the official HRDiT cascade (30 at 1x, 17 at 2x with SPA on the
    first 3, 10 at 4x, HAP on every stage step), interleaved after one untimed round of each. ``span(route, round)``
    (round -1: the untimed one) is entered around each model call: a second measure's hook (an instruction
    counter: scripts/instruction_count.py)."""
    import comfy.sample

    from ..cascade import HiFlowSettings, HrditSettings, ImaxSettings, run_cascade
    from ..cascade.families import cascade_family
    from ..cascade.imax_model import imax_stage_model

    base = base_side // 8
    hrdit = HrditSettings(cfg=cfg)
    assert hrdit.group_num == GROUP_NUM  # the real count's group_num is the official default
    stage_tokens = [int(base * s) // 2 for s in hrdit.scales]
    real_sides = [int(REAL_BASE_LATENT * s) // 2 for s in hrdit.scales]
    tiny_groups = tiny_group_num(stage_tokens, real_sides, hrdit.group_num)
    settings = {"HiFlow": HiFlowSettings(cfg=cfg), "I-Max": ImaxSettings(cfg=cfg),
                "HRDiT": HrditSettings(cfg=cfg, group_num=tiny_groups)}
    final = int(base * settings["HiFlow"].scales[-1])
    assert all(final == int(base * settings[name].scales[-1]) for name in ROUTES[1:])  # every official route: 4x
    model = tiny_flux(1, 1, 1, device)
    positive, negative = flux_cond(16, 1), flux_cond(16, 2)
    grids = {name: [] for name in ROUTES}
    attention = []  # HRDiT's calls: (SPA on, kernel), beside grids["HRDiT"]
    in_model = {name: [0.0, 0.0] for name in ROUTES}
    passes, in_vae = [], [0.0]
    vae = counting_vae(tiny_vae(device), passes, in_vae, device)
    first_calls = {}
    state = {"round": -1}

    def spanned(name: str):
        return None if span is None else (lambda: span(name, state["round"]))

    models = {name: counting(model, grids[name], in_model[name], device, first_calls,
                             attention if name == "HRDiT" else None, spanned(name)) for name in ROUTES}
    official = settings["I-Max"]
    imax_stage = counting(imax_stage_model(model, cascade_family(model, "bench"), official.ntk_factor[0], True, True,
                                           trained=(base / 2, base / 2)), grids["I-Max"], in_model["I-Max"], device,
                          first_calls, span=spanned("I-Max"))

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

    routes = {"one pass": one_pass, **{name: cascade(name) for name in ROUTES[1:]}}
    times, model_times, model_cpu, vae_times = ({name: [] for name in routes} for _ in range(4))
    vae_passes = {name: [] for name in routes}
    for route in routes.values():  # warm-up round, untimed: first-call work (kernels, plans, allocator) and the
        route()  # first call of each grid, whose arguments tiny_flops replays
    for round_index in range(runs):
        state["round"] = round_index
        order = list(routes) if round_index % 2 == 0 else list(reversed(routes))
        for name in order:
            grids[name].clear()
            if name == "HRDiT":
                attention.clear()
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
    if not any(kernel is not None for _, kernel in attention):
        raise RuntimeError("bench: the HRDiT cascade made no call with HAP's kernel; its FLOPs would be dense.")
    nominal = {"one pass": [final], **{name: [base] + [int(base * s) for s in settings[name].scales]
                                       for name in ROUTES[1:]}}
    per_grid = tiny_flops(model, first_calls)
    rows = {name: {"tiny_flops": sum(per_grid[grid] for grid in grids[name]),
                   "seconds": statistics.median(v), "model_seconds": statistics.median(model_times[name]),
                   "model_cpu_seconds": statistics.median(model_cpu[name]),
                   "vae_seconds": statistics.median(vae_times[name]), "calls": len(grids[name]),
                   "no_vae_seconds": statistics.median(t - u for t, u in zip(v, vae_times[name], strict=True)),
                   "vae_passes": len(vae_passes[name]),
                   "flops": real_flops(grids[name], nominal[name], base, duplicated=name == "I-Max",
                                       attention=attention if name == "HRDiT" else None),
                   "vae_flops": _real_vae_flops(vae_passes[name], base)}
            for name, v in times.items()}
    for hap in ("tiles", "dense"):
        rows["HRDiT"][f"flops_{hap}_hap"] = real_flops(grids["HRDiT"], nominal["HRDiT"], base, attention=attention,
                                                       hap=hap)
    rows["HRDiT"]["spa_calls"] = sum(1 for spa, _ in attention if spa)
    rows["HRDiT"]["hap_calls"] = sum(1 for _, kernel in attention if kernel is not None)
    rows["HRDiT"]["tiny_group_num"] = tiny_groups
    final_px = final * REAL_BASE_LATENT // base * 8  # 4096
    rows["one pass"]["call_px"] = final_px
    rows["one pass"]["call_flops_counted"] = flux_dev_call_flops(final_px)  # the formula's second measure
    rows["one pass"]["call_flops"] = call_flops((final_px // 16) ** 2)
    rows["HRDiT"]["real_calls"] = real_attention(grids["HRDiT"], attention, nominal["HRDiT"], base)
    return rows
