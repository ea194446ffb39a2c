"""``python <pack> bench``: the replacement embedder and the patched model against ComfyUI's stock, side by side in
one process on this machine (CUDA when present, else the CPU). Not a test: timings are medians of interleaved runs
(every variant of a row runs once per round, so load changes hit them alike); compare ratios, not milliseconds.

Needs ComfyUI: run it where ``comfy`` imports, or set ``COMFYUI_PATH``. Prints two Markdown tables (per model call;
per run) and, with ``--output``, appends them to a file with the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import torch

from ..rope import PositionSchedule
from ..spectral import SegaSettings

#: The SEGA recipe the bench's SEGA rows time (its per-step FFT is the one counted below); "paper"'s extra
#: embedding pass has its own column.
REFINED = SegaSettings(recipe="refined")

PACK_ROOT = Path(__file__).resolve().parents[1]
TEXT_TOKENS = 512  # T5 tokens of Flux/Qwen prompts as ComfyUI pads them
FLUX_AXES, THETA = [16, 56, 56], 10000
SIGMA = 0.7  # a mid-schedule flow time: the dynamic schedules are fully active
SMALL_BASE_PX = 256  # trained size given to the tiny model of the count and compile checks, sampled at 512²
PACK_SOURCES = tuple(str(PACK_ROOT / part) + tail for part, tail in
                     (("nodes", os.sep), ("rope", os.sep), ("spectral", os.sep), ("__init__.py", "")))


def is_pack_source(filename: str) -> bool:
    """A frame in the pack's own code: not merely under the checkout, which may hold .venv (with ComfyUI), .hosts
    and tests."""
    return filename.startswith(PACK_SOURCES)


def _boot() -> None:
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


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_ms(fns: dict[str, Callable[[], object]], repeats: int, device: torch.device) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up round, untimed
        fn()
    names = list(fns)
    for round_ in range(repeats):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # rotate: no variant always first
            fn = fns[name]
            _sync(device)
            start = time.perf_counter()
            fn()
            _sync(device)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def _peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """Peak memory allocated while ``fn`` runs, above what was allocated before (MiB)."""
    if device.type == "cuda":
        _sync(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        _sync(device)
        return (torch.cuda.max_memory_allocated(device) - before) / 2**20
    # CPU: the profiler's memory record, replayed in time order. Each op's own (self) net allocation counts at its
    # start and frees outside ops as "[memory]" events: a temporary an op allocates and frees inside itself is not
    # seen, for stock and ours alike.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    current = peak = 0
    for event in events:
        current += event.self_cpu_memory_usage
        peak = max(peak, current)
    return peak / 2**20


# ---------------------------------------------------------------------------------------------- ids as models build
def flux_ids(batch: int, tokens: int, device: torch.device) -> torch.Tensor:
    """Flux.1: text ids 0, then (0, row, col) from 0 (comfy/ldm/flux/model.py)."""
    img = torch.zeros(tokens, tokens, 3, device=device)
    img[..., 1] = torch.arange(tokens, device=device, dtype=torch.float32)[:, None]
    img[..., 2] = torch.arange(tokens, device=device, dtype=torch.float32)[None]
    ids = torch.cat([torch.zeros(TEXT_TOKENS, 3, device=device), img.reshape(-1, 3)])
    return ids[None].repeat(batch, 1, 1)


def qwen_ids(batch: int, tokens: int, device: torch.device) -> torch.Tensor:
    """Qwen-Image: text on the diagonal from max(h, w) // 2, then the image centred (comfy/ldm/qwen_image)."""
    img = torch.zeros(tokens, tokens, 3, device=device)
    centred = torch.arange(tokens, device=device, dtype=torch.float32) - tokens // 2
    img[..., 1] = centred[:, None]
    img[..., 2] = centred[None]
    text = torch.arange(tokens // 2, tokens // 2 + TEXT_TOKENS, device=device, dtype=torch.float32)
    ids = torch.cat([text[:, None].expand(-1, 3), img.reshape(-1, 3)])
    return ids[None].repeat(batch, 1, 1)


@dataclasses.dataclass
class Case:
    family: str  # adapter name
    side: int  # pixels
    batch: int

    @property
    def tokens(self) -> int:
        return self.side // 16

    @property
    def label(self) -> str:
        return f"{'Flux' if self.family == 'flux' else 'Qwen'} {self.side}² B{self.batch}"


def _embedder_row(case: Case, repeats: int, device: torch.device, memory: bool) -> dict[str, float]:
    from comfy.ldm.flux.layers import EmbedND

    from .config import PatchConfig
    from .embedder import ExtrapolatingRopeEmbedder
    from .families import find_adapter
    from .runtime import CALL, build_call_scope

    adapter = find_adapter(case.family)
    stock = EmbedND(dim=128, theta=THETA, axes_dim=FLUX_AXES)
    ours = ExtrapolatingRopeEmbedder(stock)
    ids = (flux_ids if case.family == "flux" else qwen_ids)(case.batch, case.tokens, device)
    shape = (case.batch, 16, 2 * case.tokens, 2 * case.tokens)
    x = torch.randn((*shape[:2], 1, *shape[2:]) if case.family == "qwen_image" else shape, device=device)
    sigma = torch.full((case.batch,), SIGMA, device=device)
    checked = {(0, tuple(ids.shape[1:]), ids.dtype): True}  # a later call of a run: its ids signature is checked

    def call(config: PatchConfig) -> Callable[[], torch.Tensor]:
        def run() -> torch.Tensor:  # the whole per-call work of ours: schedule (+ SEGA spectrum) and table
            scope = build_call_scope(config, adapter, ours, x, sigma, None, dict(checked))
            token = CALL.set(scope)
            try:
                return ours(ids)
            finally:
                CALL.reset(token)

        return run

    def dype(method: str) -> PatchConfig:
        return PatchConfig().with_positions(PositionSchedule(method=method), 0)

    fns = {
        "stock": lambda: stock(ids),
        "yarn": call(dype("yarn")),
        "ntk": call(dype("ntk")),
        "pi": call(dype("pi")),
        "sega": call(dype("yarn").with_sega(REFINED, 0)),
        "embed": _embedding_pass(case, x),
        "floor": lambda: torch.empty((case.batch, 1, ids.shape[1], 64, 2, 2), device=device).fill_(1.0),
    }
    with torch.no_grad():
        assert torch.equal(fns["yarn"](), _stock_formula(case, ids, x, sigma, adapter, ours))
        row = _median_ms(fns, repeats, device)
        if memory:
            row["mem_stock"] = _peak_mib(fns["stock"], device)
            row["mem_ours"] = _peak_mib(fns["yarn"], device)
            row["mem_sega"] = _peak_mib(fns["sega"], device)
    return row


def _embedding_pass(case: Case, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """SEGA "paper"'s extra per step: the channel mean of the patch embedding over the latent, through a layer of the
    production size (Flux.1 / Qwen-Image img_in: Linear 64 -> 3072, ComfyUI's own op class)."""
    import comfy.ops

    from .token_maps import _linear_rows

    layer = comfy.ops.disable_weight_init.Linear(64, 3072, device=x.device)
    with torch.no_grad():
        layer.weight.normal_(0.0, 0.02)
        layer.bias.zero_()
    frames = x if x.dim() == 5 else x[:, :, None]
    return lambda: _linear_rows(layer, frames, 2, "c ph pw")


def _stock_formula(case, ids, x, sigma, adapter, ours) -> torch.Tensor:
    """The same call with the window unchecked: every token's cos/sin (what the gather must equal bit for bit)."""
    from .config import PatchConfig
    from .runtime import CALL, build_call_scope

    scope = build_call_scope(PatchConfig().with_positions(PositionSchedule(), 0), adapter, ours, x, sigma)
    token = CALL.set(scope)
    try:
        return ours(ids)
    finally:
        CALL.reset(token)


# ----------------------------------------------------------------------------------------------- tiny ComfyUI Flux
def tiny_flux(depth: int, single: int, heads: int, device: torch.device):
    """ComfyUI's own Flux (head dim 128, axes 16/56/56) with random weights: ``depth`` double and ``single`` single
    blocks of ``heads`` heads."""
    import comfy.ldm.flux.model
    import comfy.model_patcher
    import comfy.supported_models

    config = dict(image_model="flux", in_channels=16, out_channels=16, vec_in_dim=32, context_in_dim=32,
                  hidden_size=128 * heads, mlp_ratio=2.0, num_heads=heads, depth=depth, depth_single_blocks=single,
                  axes_dim=FLUX_AXES, theta=THETA, patch_size=2, qkv_bias=True, guidance_embed=True)
    fields = {f.name for f in dataclasses.fields(comfy.ldm.flux.model.FluxParams)}
    newer = dict(txt_ids_dims=[], vec_in_dim=None, use_x0=False, use_sequential_txt_ids=False, meanflow_sum=False)
    config.update({k: v for k, v in newer.items() if k in fields and k not in config})
    model_config = comfy.supported_models.Flux(config)
    model_config.set_inference_dtype(torch.float32, None)
    model = model_config.get_model({})
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
    model.eval()
    return comfy.model_patcher.ModelPatcher(model, load_device=device, offload_device=device)


def flux_cond(tokens: int, seed: int) -> list:
    gen = torch.Generator().manual_seed(seed)
    return [[torch.randn(1, tokens, 32, generator=gen), {"pooled_output": torch.randn(1, 32, generator=gen),
                                                         "guidance": 3.5}]]


def patched(model, sega: bool = False, base_px: float = 0):
    """DyPE (official defaults), optionally + SEGA, trained at ``base_px`` (0: the family's 1024)."""
    from .patch import patch_model

    model = patch_model(model, lambda c: c.with_positions(PositionSchedule(), base_px))
    return patch_model(model, lambda c: c.with_sega(REFINED, base_px)) if sega else model


def sample(model, side: int, steps: int, cfg: float, negative_tokens: int = 16) -> torch.Tensor:
    import comfy.sample

    latent = torch.zeros(1, 16, side // 8, side // 8)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    return comfy.sample.sample(model, noise, steps, cfg, "euler", "simple", flux_cond(16, 1),
                               flux_cond(negative_tokens, 2), latent, seed=0, disable_pbar=True)


@contextlib.contextmanager
def counting(target: object, name: str, counter: list) -> Iterator[None]:
    real = getattr(target, name)

    def counted(*args, **kwargs):
        counter.append(name)
        return real(*args, **kwargs)

    if isinstance(target, type):  # a method: stay one, bound to the instance
        counted = functools.wraps(real)(counted)

    setattr(target, name, counted)
    try:
        yield
    finally:
        setattr(target, name, real)


@contextlib.contextmanager
def tensor_reads_from_pack(reads: list) -> Iterator[None]:
    """Record every .item()/.tolist()/bool()/float()/int() of a tensor whose caller is the pack (tests excluded)."""
    names = ("item", "tolist", "__bool__", "__float__", "__int__")
    reals = {name: getattr(torch.Tensor, name) for name in names}

    def spy(name):
        def read(self, *args, **kwargs):
            caller = traceback.extract_stack(limit=2)[0]
            if is_pack_source(caller.filename):
                reads.append((caller.name, self.device.type))
            return reals[name](self, *args, **kwargs)

        return read

    for name in names:
        setattr(torch.Tensor, name, spy(name))
    try:
        yield
    finally:
        for name, real in reals.items():
            setattr(torch.Tensor, name, real)


def per_step_counts(device: torch.device) -> dict[str, float]:
    """DyPE + SEGA on a tiny Flux, split conds (different text lengths: one model call each), 4 steps: model calls,
    latent spectra (the FFT), tables built and gathered, and tensor values our code reads (and where)."""
    import comfy.patcher_extension as ext

    from .. import spectral
    from . import embedder

    steps = 4
    model = patched(tiny_flux(1, 1, 1, device), sega=True, base_px=SMALL_BASE_PX)
    spectra, tables, gathers, reads, model_calls = [], [], [], [], []

    def count_call(executor, *args, **kwargs):
        model_calls.append(1)
        return executor(*args, **kwargs)

    model.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "bench_count", count_call)
    with counting(spectral, "latent_spectrum", spectra), \
            counting(embedder.ExtrapolatingRopeEmbedder, "forward", tables), \
            counting(embedder, "gather_tables", gathers), \
            tensor_reads_from_pack(reads):
        sample(model, 512, steps, 3.0, negative_tokens=9)
    in_steps = [r for r in reads if r[0] != "_report_run"]
    return {"steps": steps, "calls": len(model_calls) / steps, "spectrum": len(spectra) / steps,
            "table": len(tables) / steps, "gather": len(gathers), "reads_in_steps": len(in_steps),
            "reads_in_steps_device": sum(1 for r in in_steps if r[1] != "cpu"),
            "reads_at_end": len(reads) - len(in_steps)}


def compile_facts(device: torch.device) -> dict[str, int]:
    """``torch._dynamo.explain`` of the patched diffusion model (graph breaks from our frames vs stock), and how many
    frames ComfyUI's torch.compile wrapper compiles per model call over two runs of 4 steps."""
    import comfy.patcher_extension as ext
    from comfy_api.torch_helpers.torch_compile import set_torch_compile_wrapper
    from torch._dynamo.testing import CompileCounter

    facts = {}
    for name, make in (("stock", lambda: tiny_flux(1, 1, 1, device)),
                       ("patched", lambda: patched(tiny_flux(1, 1, 1, device), sega=True, base_px=SMALL_BASE_PX))):
        model = make().clone()
        explained = []

        def explain(executor, *args, explained=explained, **kwargs):
            if not explained:
                explained.append(torch._dynamo.explain(executor.class_obj._forward)(*args, **kwargs))
            return executor(*args, **kwargs)

        model.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "bench_explain", explain)
        sample(model, 512, 1, 1.0)
        torch._dynamo.reset()
        facts[f"{name}_breaks"] = explained[0].graph_break_count
        facts[f"{name}_ours"] = sum(
            1 for b in explained[0].break_reasons
            if any(is_pack_source(f.filename) for f in b.user_stack))
        counter = CompileCounter()
        compiled = make()
        set_torch_compile_wrapper(compiled, backend=counter)
        frames = []

        def count(executor, *args, frames=frames, counter=counter, **kwargs):
            out = executor(*args, **kwargs)
            frames.append(counter.frame_count)
            return out

        compiled.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "bench_count", count)
        for _ in range(2):
            sample(compiled, 512, 4, 3.0, negative_tokens=16)
        torch._dynamo.reset()
        facts[f"{name}_first_call"] = frames[0]
        facts[f"{name}_later"] = frames[-1] - frames[0]
        facts[f"{name}_after_second_call"] = frames[-1] - frames[1]
    return facts


@contextlib.contextmanager
def timed(targets: Sequence[tuple[object, str]], total: list) -> Iterator[None]:
    """Add the wall time spent inside any of ``targets`` (object, attribute) to ``total[0]`` (outermost only)."""
    reals = [(target, name, getattr(target, name)) for target, name in targets]
    depth = [0]

    def wrap(real):
        def timed_call(*args, **kwargs):
            depth[0] += 1
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    total[0] += time.perf_counter() - start

        return functools.wraps(real)(timed_call)

    for target, name, real in reals:
        setattr(target, name, wrap(real))
    try:
        yield
    finally:
        for target, name, real in reals:
            setattr(target, name, real)


def whole_sampling(side: int, steps: int, runs: int, blocks: tuple[int, int], device: torch.device) -> dict:
    """Wall time of comfy.sample.sample, patched (DyPE + SEGA: every per-call path of ours) vs stock, interleaved,
    cfg 1 and 3.5 (one CFG batch of 2: both prompts have the same length), and the time spent building RoPE tables
    inside it (stock: EmbedND; patched: our schedule, SEGA spectrum and allocation, table, ids check)."""
    from comfy.ldm.flux.layers import EmbedND

    from . import embedder, ids_check, runtime

    # One model per variant (same weights): clones of one model would re-patch it each time they take turns.
    models = {"stock": tiny_flux(*blocks, 1, device), "dype+sega": patched(tiny_flux(*blocks, 1, device), sega=True)}
    rope_work = {"stock": [(EmbedND, "forward")],
                 "dype+sega": [(embedder.ExtrapolatingRopeEmbedder, "forward"), (runtime, "build_call_scope"),
                               (ids_check.WindowChecks, "file"), (ids_check.WindowChecks, "poll"),
                               (runtime, "ids_signature")]}
    for model in models.values():  # warm-up: load, first-call checks, allocator
        sample(model, side // 2, 1, 1.0)
    out = {}
    for cfg in (1.0, 3.5):
        times = {name: [] for name in models}
        rope = {name: [0.0] for name in models}
        for _ in range(runs):
            for name, model in models.items():
                with timed(rope_work[name], rope[name]):
                    start = time.perf_counter()
                    sample(model, side, steps, cfg)
                    _sync(device)
                    times[name].append(time.perf_counter() - start)
        out[cfg] = {name: (statistics.median(v), min(v), max(v), rope[name][0] / sum(v)) for name, v in times.items()}
    return out


def _fmt(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def main(argv: Sequence[str], prog: str = "bench") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sides", type=int, nargs="+", default=[1024, 2048, 4096, 8192], help="Flux sizes, px")
    parser.add_argument("--qwen-sides", type=int, nargs="*", default=[4096], help="Qwen-Image sizes, px")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per embedder row (8192²: 3)")
    parser.add_argument("--sampling-side", type=int, default=2048, help="whole-sampling size, px (0: skip)")
    parser.add_argument("--sampling-runs", type=int, default=2, help="interleaved runs per variant")
    parser.add_argument("--blocks", type=int, nargs=2, default=[1, 1], metavar=("DOUBLE", "SINGLE"))
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (1: steadier on a shared machine)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile facts")
    parser.add_argument("--output", type=Path, default=None, help="append the tables to this Markdown file")
    args = parser.parse_args(list(argv))
    _boot()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cpu" and args.threads > 0:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {device}"
             f"{' ' + torch.cuda.get_device_name(device) if device.type == 'cuda' else ''}, torch {torch.__version__}"
             f", {torch.get_num_threads()} threads; load average at start "
             f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}", "",
             "Per model call (ms, medians; ours = the whole per-call work: schedule + gathered table; SEGA step = "
             "schedule + FFT + allocation + table, recipe refined; paper embed = what recipe paper adds per step: "
             "the patch embedding's channel mean over the latent, Linear 64 -> 3072):", "",
             "| case | stock | yarn | ntk | pi | SEGA step | paper embed | floor | yarn/stock | SEGA/stock | "
             "yarn/floor |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    cases = [Case("flux", side, b) for side in args.sides for b in args.batch]
    cases += [Case("qwen_image", side, b) for side in args.qwen_sides for b in args.batch]
    memory = {}
    for case in cases:
        repeats = min(args.repeats, 3) if case.side >= 8192 else args.repeats
        ms = _embedder_row(case, repeats, device, memory=case.side == 4096 and case.family == "flux")
        if "mem_stock" in ms:
            memory[case.batch] = ms
        row = (f"| {case.label} | {_fmt(ms['stock'])} | {_fmt(ms['yarn'])} | {_fmt(ms['ntk'])} | {_fmt(ms['pi'])} | "
               f"{_fmt(ms['sega'])} | {_fmt(ms['embed'])} | {_fmt(ms['floor'])} | {ms['yarn'] / ms['stock']:.3f} | "
               f"{ms['sega'] / ms['stock']:.3f} | {ms['yarn'] / ms['floor']:.2f} |")
        print(row, flush=True)
        lines.append(row)
    run_lines = ["", "Per run:", "", "| measure | case | stock | ours | ours/stock |", "|---|---|---|---|---|"]
    for batch, ms in sorted(memory.items()):
        for name, key in (("yarn", "mem_ours"), ("SEGA step", "mem_sega")):
            run_lines.append(f"| peak extra memory of one call, MiB | Flux 4096² B{batch}, {name} | "
                             f"{ms['mem_stock']:.0f} | {ms[key]:.0f} | {ms[key] / ms['mem_stock']:.2f} |")
    counts = per_step_counts(device)
    run_lines += [
        f"| per step, split conds (2 model calls) | FFT (latent spectrum) | – | {counts['spectrum']:g} | – |",
        f"| per step, split conds | tables built (one per model call) | {counts['calls']:g} | "
        f"{counts['table']:g} | – |",
        f"| per run of {counts['steps']} steps | tables gathered (after each signature's first call) | – | "
        f"{counts['gather']} | – |",
        f"| per run | tensor reads by our code during the steps (of them on a device) | – | "
        f"{counts['reads_in_steps']} ({counts['reads_in_steps_device']}) | – |",
        f"| per run | tensor reads by our code at the end (one transfer) | – | {counts['reads_at_end']} | – |",
    ]
    if not args.no_compile:
        c = compile_facts(device)
        run_lines += [
            f"| torch._dynamo.explain | graph breaks (from our frames) | {c['stock_breaks']} ({c['stock_ours']}) | "
            f"{c['patched_breaks']} ({c['patched_ours']}) | – |",
            f"| torch.compile, 2 runs × 4 steps, cfg 3 | frames compiled: first call / after it / after 2nd call | "
            f"{c['stock_first_call']} / {c['stock_later']} / {c['stock_after_second_call']} | "
            f"{c['patched_first_call']} / {c['patched_later']} / {c['patched_after_second_call']} | – |",
        ]
    if args.sampling_side:
        timing = whole_sampling(args.sampling_side, 4, args.sampling_runs, tuple(args.blocks), device)
        for cfg, by_name in timing.items():
            stock = by_name["stock"][0]
            med, low, high, share = by_name["dype+sega"]
            case = f"Flux {args.sampling_side}², {sum(args.blocks)} blocks, 4 steps, cfg {cfg:g}, DyPE + SEGA"
            run_lines.append(
                f"| whole sampling, s (median [min–max] of {args.sampling_runs}) | {case} | {stock:.1f} "
                f"[{by_name['stock'][1]:.1f}–{by_name['stock'][2]:.1f}] | {med:.1f} [{low:.1f}–{high:.1f}] | "
                f"{med / stock:.3f} |")
            run_lines.append(f"| share of that time spent building RoPE tables | {case} | "
                             f"{100 * by_name['stock'][3]:.2f}% | {100 * share:.2f}% | – |")
    print("\n".join(run_lines), flush=True)
    lines += run_lines
    lines.append(f"\nBench wall time: {time.perf_counter() - started:.0f} s.")
    print(lines[-1].strip())
    if args.output is not None:
        with args.output.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")
    return 0
