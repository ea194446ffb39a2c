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

    from .report import Summary

#: What a run measures (--only): the per-call table (with peak memory at Flux 4096²), the per-step counts, the
#: torch.compile facts, whole sampling, the HiFlow cascade, HRDiT's HAP (its block mask's memory, its attention).
PARTS = ("calls", "counts", "compile", "sampling", "hiflow", "hap")


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
                        help="the cascades (HiFlow, I-Max, HRDiT) vs one pass: the tiny FLUX's base size, px (final 4x; 0: skip)")
    parser.add_argument("--hiflow-runs", type=bounded(int, 1, 100), default=2, help="interleaved runs per route")
    parser.add_argument("--hap-sides", type=side, nargs="*", default=[2048, 4096],
                        help="HAP's block-mask memory at these FLUX.1 sizes, px (none: skip the HAP rows)")
    parser.add_argument("--hap-compile-side", type=bounded(int, 16, 65536, multiple=16, zero=True), default=1024,
                        help="the compiled create_block_mask at this size, px (0: skip; ~35 s to compile on a CPU)")
    parser.add_argument("--hap-time-side", type=bounded(int, 16, 65536, multiple=16, zero=True), default=2048,
                        help="HAP's blockwise attention vs SDPA at this size, px (0: skip)")
    parser.add_argument("--hap-heads", type=bounded(int, 1, 64), default=1, help="heads of that attention")
    parser.add_argument("--hap-runs", type=bounded(int, 1, 100), default=3, help="interleaved rounds of that timing")
    parser.add_argument("--only", choices=PARTS, nargs="+", default=list(PARTS), metavar="PART",
                        help=f"measure only these parts: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--hiflow-only", action="store_true", help="the same as --only hiflow")
    parser.add_argument("--blocks", type=bounded(int, 0, 64), nargs=2, default=[1, 1], metavar=("DOUBLE", "SINGLE"))
    parser.add_argument("--threads", type=bounded(int, 1, 1024), default=1,
                        help="CPU threads (1: steadier on a shared machine)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile facts")
    parser.add_argument("--output", type=_output, default=None, help="append the tables to this Markdown file")
    parser.add_argument("--summary", type=_output, default=None,
                        help="append one line per figure to this file as each is measured")
    args = parser.parse_args(list(argv))
    if sum(args.blocks) == 0:
        parser.error("argument --blocks: the model needs at least one block, got 0 0")
    parts = {"hiflow"} if args.hiflow_only else set(args.only)
    if args.no_compile:
        parts.discard("compile")
    if not args.sampling_side:
        parts.discard("sampling")
    if not args.hiflow_side:
        parts.discard("hiflow")
    if not args.hap_sides and not args.hap_time_side:
        parts.discard("hap")
    import torch  # after the arguments are read: without torch, __main__ names the Python to use

    from .hiflow_rows import hiflow_row
    from .model import boot
    from .report import Summary, hiflow_lines, hiflow_summary
    from .run_facts import compile_facts, per_step_counts

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
    summary = Summary(args.summary)
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {device}"
             f"{' ' + torch.cuda.get_device_name(device) if device.type == 'cuda' else ''}, torch {torch.__version__}"
             f", {torch.get_num_threads()} threads; load average at start "
             f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}"]
    summary.note(lines[0])
    print(lines[0], flush=True)
    run_lines: list[str] = []  # the per-run table's rows
    if "calls" in parts:
        lines += _call_table(args, device, summary, run_lines)
    if "counts" in parts:
        counts = per_step_counts(device)
        run_lines += [
            f"| per step, split conds (2 model calls) | FFT (latent spectrum) | – | {counts['spectrum']:g} | – |",
            f"| per step, split conds | tables built (one per model call) | {counts['calls']:g} | "
            f"{counts['table']:g} | – |",
            f"| per run | tensor reads by our code during the steps (of them on a device) | – | "
            f"{counts['reads_in_steps']} ({counts['reads_in_steps_device']}) | – |",
            f"| per run | tensor reads by our code at the end (one transfer) | – | {counts['reads_at_end']} | – |",
        ]
    if "compile" in parts:
        c = compile_facts(device)
        run_lines += [
            f"| torch._dynamo.explain | graph breaks (from our frames) | {c['stock_breaks']} ({c['stock_ours']}) | "
            f"{c['patched_breaks']} ({c['patched_ours']}) | – |",
            f"| torch.compile, 2 runs × 4 steps, cfg 3 | frames compiled: first call / after it / after 2nd call | "
            f"{c['stock_first_call']} / {c['stock_later']} / {c['stock_after_second_call']} | "
            f"{c['patched_first_call']} / {c['patched_later']} / {c['patched_after_second_call']} | – |",
        ]
    if "sampling" in parts:
        run_lines += _sampling_rows(args, device, summary)
    if run_lines:
        run_lines = ["", "Per run:", "", "| measure | case | stock | ours | ours/stock |", "|---|---|---|---|---|",
                     *run_lines]
    if "hiflow" in parts:
        row = hiflow_row(args.hiflow_side, args.hiflow_runs, device)
        for line in hiflow_summary(args.hiflow_side, args.hiflow_runs, row, device.type == "cpu"):
            summary.note(line)
        run_lines += hiflow_lines(args.hiflow_side, args.hiflow_runs, row, device.type == "cpu")
    if "hap" in parts:
        run_lines += _hap_rows(args, device, summary)
    print("\n".join(run_lines), flush=True)
    lines += run_lines
    lines.append(f"\nBench wall time: {time.perf_counter() - started:.0f} s.")
    print(lines[-1].strip())
    if args.output is not None:
        with args.output.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")
    return 0


def _call_table(args: argparse.Namespace, device: torch.device, summary: Summary, run_lines: list[str]) -> list[str]:
    """The per-call table, printed row by row; peak memory (Flux 4096²) goes to the per-run rows."""
    from .embedder_rows import Case, embedder_row, memory_row, paper_flops
    from .report import STOCK_PATH, call_header, call_row, call_summary, memory_rows, memory_summary, paper_line

    lines = ["", "Per model call (ms, medians; ours = the whole per-call work: schedule + table; DyPE + SEGA refined = "
             "schedule + the latent's FFT + allocation + table; SEGA paper (the SEGA node's default recipe, alone) "
             "and DyPE + SEGA paper = schedule + the model's patch embedding over the latent (Linear 64 -> 3072, "
             "its channel mean) + its FFT + allocation + table; the spectrum is once per step, the table once per "
             f"call; at or below the trained size ours runs stock's own embedder: \"{STOCK_PATH}\", no ratio):", "",
             *call_header()]
    print("\n".join(lines), flush=True)
    cases = [Case("flux", side, b) for side in args.sides for b in args.batch]
    cases += [Case("qwen_image", side, b) for side in args.qwen_sides for b in args.batch]
    flops: list[str] = []
    for case in cases:
        repeats = min(args.repeats, 3) if case.side >= 8192 else args.repeats
        ms, stock_path = embedder_row(case, repeats, device)
        summary.note(call_summary(case, ms, stock_path, repeats))
        lines.append(call_row(case, ms, stock_path))
        print(lines[-1], flush=True)
        if not stock_path:
            flops.append(paper_line(case, paper_flops(case, device)))
        if case.side == 4096 and case.family == "flux":
            peaks = memory_row(case, device)
            for line in memory_summary(case, peaks):
                summary.note(line)
            run_lines += memory_rows(case, peaks)
    for line in flops:
        summary.note(line)
    lines += ["", *flops] if flops else []
    print("\n".join(["", *flops]) if flops else "", flush=True)
    return lines


def _sampling_rows(args: argparse.Namespace, device: torch.device, summary: Summary) -> list[str]:
    from .whole_sampling import whole_sampling

    rows = []
    timing = whole_sampling(args.sampling_side, 4, args.sampling_runs, tuple(args.blocks), device)
    for cfg, by_name in timing.items():
        stock = by_name["stock"][0]
        med, low, high, share = by_name["dype+sega"]
        ratio, ratio_low, ratio_high = by_name["ratio"]
        case = f"Flux {args.sampling_side}², {sum(args.blocks)} blocks, 4 steps, cfg {cfg:g}, DyPE + SEGA"
        rows.append(f"| whole sampling, s (median [min–max] of {args.sampling_runs}) | {case} | {stock:.1f} "
                    f"[{by_name['stock'][1]:.1f}–{by_name['stock'][2]:.1f}] | {med:.1f} [{low:.1f}–{high:.1f}] | "
                    f"{med / stock:.3f} |")
        rows.append(f"| whole sampling, ours / stock of each round (median [min–max]) | {case} | – | – | "
                    f"{ratio:.3f} [{ratio_low:.3f}–{ratio_high:.3f}] |")
        rows.append(f"| share of that time spent building RoPE tables | {case} | {100 * by_name['stock'][3]:.2f}% | "
                    f"{100 * share:.2f}% | – |")
        summary.note(f"whole sampling, {case}: ours/stock {ratio:.3f} [{ratio_low:.3f}–{ratio_high:.3f}] (paired "
                     f"rounds, median [min–max] of {args.sampling_runs}; stock {stock:.2f} s; RoPE tables "
                     f"{100 * share:.2f} % of ours, {100 * by_name['stock'][3]:.2f} % of stock)")
    return rows


def _hap_rows(args: argparse.Namespace, device: torch.device, summary: Summary) -> list[str]:
    from .hap_report import hap_lines, hap_summary
    from .hap_rows import mask_figures, timing_figures

    masks = timing = None
    if args.hap_sides:
        masks = mask_figures(args.hap_sides, args.hap_compile_side, device)
        for line in hap_summary(masks, None):
            summary.note(line)
    if args.hap_time_side:
        timing = timing_figures(args.hap_time_side, args.hap_heads, args.hap_runs, device)
        for line in hap_summary(None, timing):
            summary.note(line)
    return hap_lines(masks, timing, str(device))
