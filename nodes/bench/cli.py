"""``python <pack> bench``: the replacement embedder and the patched model against ComfyUI's stock, side by side in
one process on this machine (CUDA when present, else the CPU). Not a test: timings are medians of interleaved runs
(every variant of a row runs once per round, so load changes hit them alike); compare ratios, not milliseconds.

Needs ComfyUI: run it where ``comfy`` imports, or set ``COMFYUI_PATH``. Prints two Markdown tables (per model call;
per run) and, with ``--output``, appends them to a file with the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...spectral.command_line import USAGE_ERROR, OneLineParser, bounded

if TYPE_CHECKING:  # torch and the rows that use it are imported once the arguments are read (--help needs neither)
    import torch


def _fmt(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def _output(text: str) -> Path:
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a Markdown file such as {path / 'bench.md'}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"the directory {path.parent} does not exist")
    return path


def comfyui_problem() -> str | None:
    """Why ComfyUI cannot be imported here (checked before booting it), or None."""
    root = os.environ.get("COMFYUI_PATH")
    if root:
        if not (Path(root) / "comfy").is_dir():
            return f"COMFYUI_PATH={root} is not a ComfyUI checkout (no comfy/ folder in it)"
        return None
    if importlib.util.find_spec("comfy") is None:
        return "ComfyUI not found: run it where `comfy` imports, or set COMFYUI_PATH=/path/to/ComfyUI"
    return None


def _hiflow_lines(side: int, runs: int, device: torch.device) -> list[str]:
    from .hiflow_rows import hiflow_row

    row = hiflow_row(side, runs, device)
    one, cascade = row["one pass"], row["HiFlow"]
    case = (f"tiny FLUX {side}² -> {side * 4}² (4x), official defaults: one pass 30 steps at {side * 4}², HiFlow "
            f"30 + 16 + 10")

    def line(label: str, key: str, scale: float = 1.0, digits: int = 1) -> str:
        a, b = one[key] / scale, cascade[key] / scale
        return f"| {label} | {a:.{digits}f} | {b:.{digits}f} | {b / a:.3f} |" if a else \
            f"| {label} | {a:.{digits}f} | {b:.{digits}f} | – |"

    return ["", f"HiFlow cascade vs one pass ({case}; FLOPs for FLUX.1-dev, 57 blocks, width 3072, 512 text tokens, "
            "and its VAE, at 1024² -> 4096²):", "", "| measure | one pass | HiFlow | HiFlow/one pass |",
            "|---|---|---|---|",
            line(f"CPU time end to end, s (median of {runs}, tiny model and tiny VAE)", "seconds"),
            line("of it inside the model calls, s", "model_seconds"),
            line("of it in the VAE passes, s", "vae_seconds"),
            line("end to end without the VAE passes, s", "no_vae_seconds"),
            f"| model calls / VAE passes | {one['calls']} / {one['vae_passes']} | {cascade['calls']} / "
            f"{cascade['vae_passes']} | – |",
            line("FLOPs of the model calls at FLUX.1-dev size, PFLOP", "flops", 1e15),
            line("FLOPs of the VAE passes at the FLUX VAE's size, PFLOP", "vae_flops", 1e15, 2),
            f"| FLOPs in all, PFLOP | {(one['flops'] + one['vae_flops']) / 1e15:.1f} | "
            f"{(cascade['flops'] + cascade['vae_flops']) / 1e15:.1f} | "
            f"{(cascade['flops'] + cascade['vae_flops']) / (one['flops'] + one['vae_flops']):.3f} |"]


def main(argv: Sequence[str], prog: str = "bench") -> int:
    parser = OneLineParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    side = bounded(int, 16, 65536, multiple=16)  # one Flux / Qwen-Image token is 16 px
    parser.add_argument("--sides", type=side, nargs="+", default=[1024, 2048, 4096, 8192], help="Flux sizes, px")
    parser.add_argument("--qwen-sides", type=side, nargs="*", default=[4096], help="Qwen-Image sizes, px")
    parser.add_argument("--batch", type=bounded(int, 1, 64), nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=bounded(int, 1, 1000), default=5, help="timed rounds per embedder row (8192²: 3)")
    parser.add_argument("--sampling-side", type=bounded(int, 64, 65536, multiple=32, zero=True), default=2048,
                        help="whole-sampling size, px, a multiple of 32 (its warm-up samples at half) (0: skip)")
    parser.add_argument("--sampling-runs", type=bounded(int, 1, 100), default=2, help="interleaved runs per variant")
    parser.add_argument("--hiflow-side", type=bounded(int, 16, 4096, multiple=16, zero=True), default=128,
                        help="HiFlow cascade vs one pass: the tiny FLUX's base size, px (final 4x; 0: skip)")
    parser.add_argument("--hiflow-runs", type=bounded(int, 1, 100), default=2, help="interleaved runs per route")
    parser.add_argument("--hiflow-only", action="store_true", help="print only the HiFlow table")
    parser.add_argument("--blocks", type=bounded(int, 0, 64), nargs=2, default=[1, 1], metavar=("DOUBLE", "SINGLE"))
    parser.add_argument("--threads", type=bounded(int, 1, 1024), default=1,
                        help="CPU threads (1: steadier on a shared machine)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile facts")
    parser.add_argument("--output", type=_output, default=None, help="append the tables to this Markdown file")
    args = parser.parse_args(list(argv))
    if sum(args.blocks) == 0:
        parser.error("argument --blocks: the model needs at least one block, got 0 0")
    import torch

    from .embedder_rows import Case, embedder_row
    from .model import boot
    from .run_facts import compile_facts, per_step_counts
    from .whole_sampling import whole_sampling

    problem = comfyui_problem()
    if problem:
        parser.exit(USAGE_ERROR, f"{prog}: error: {problem}\n")
    try:
        boot()
    except ImportError as error:  # a ComfyUI tree whose own imports fail here (a missing requirement)
        parser.exit(1, f"{prog}: error: ComfyUI does not import here: {error}\n")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {device}"
             f"{' ' + torch.cuda.get_device_name(device) if device.type == 'cuda' else ''}, torch {torch.__version__}"
             f", {torch.get_num_threads()} threads; load average at start "
             f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}", "",
             "Per model call (ms, medians; ours = the whole per-call work: schedule + table; SEGA step = "
             "schedule + FFT + allocation + table, recipe refined; paper embed = what recipe paper adds per step: "
             "the patch embedding's channel mean over the latent, Linear 64 -> 3072):", "",
             "| case | stock | yarn | ntk | pi | SEGA step | paper embed | floor | yarn/stock | SEGA/stock | "
             "yarn/floor |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    if args.hiflow_only:
        lines = lines[:1]
        args.sides, args.qwen_sides, args.sampling_side, args.no_compile = [], [], 0, True
    print("\n".join(lines), flush=True)
    cases = [Case("flux", side, b) for side in args.sides for b in args.batch]
    cases += [Case("qwen_image", side, b) for side in args.qwen_sides for b in args.batch]
    memory = {}
    for case in cases:
        repeats = min(args.repeats, 3) if case.side >= 8192 else args.repeats
        ms = embedder_row(case, repeats, device, memory=case.side == 4096 and case.family == "flux")
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
            ratio, ratio_low, ratio_high = by_name["ratio"]
            case = f"Flux {args.sampling_side}², {sum(args.blocks)} blocks, 4 steps, cfg {cfg:g}, DyPE + SEGA"
            run_lines.append(
                f"| whole sampling, s (median [min–max] of {args.sampling_runs}) | {case} | {stock:.1f} "
                f"[{by_name['stock'][1]:.1f}–{by_name['stock'][2]:.1f}] | {med:.1f} [{low:.1f}–{high:.1f}] | "
                f"{med / stock:.3f} |")
            run_lines.append(f"| whole sampling, ours / stock of each round (median [min–max]) | {case} | – | – | "
                             f"{ratio:.3f} [{ratio_low:.3f}–{ratio_high:.3f}] |")
            run_lines.append(f"| share of that time spent building RoPE tables | {case} | "
                             f"{100 * by_name['stock'][3]:.2f}% | {100 * share:.2f}% | – |")
    if args.hiflow_side:
        run_lines += _hiflow_lines(args.hiflow_side, args.hiflow_runs, device)
    print("\n".join(run_lines), flush=True)
    lines += run_lines
    lines.append(f"\nBench wall time: {time.perf_counter() - started:.0f} s.")
    print(lines[-1].strip())
    if args.output is not None:
        with args.output.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")
    return 0
