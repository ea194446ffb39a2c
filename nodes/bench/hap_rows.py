"""``bench --only hap``: HRDiT's HAP (nodes/hap/) by the two numbers that decide where it can run.

* **Its FlexAttention block mask** at FLUX.1's sizes (512 text tokens, 24 heads, the shipped plan's half-width,
  global anchor 32): the bytes of the built BlockMask and the peak bytes allocated while it is built, ours
  (nodes/hap/block_mask.py) against ``create_block_mask`` with the official per-head ``mask_mod`` (zylwithxy/HRDiT
  e4aa8c6 hrdit/hap.py; H=24), eager (as the pack built it before) and compiled (``_compile=True``, as the official
  code builds it). Ours by two gauges (peak_memory.py). The eager build at these sizes needs tens to hundreds of GiB,
  so it is traced on the meta device (allocation_trace.py); that trace is checked against a real eager build at
  ``CALIBRATION_SIDE`` by the allocator's record and the second gauge. The compiled build is measured at
  ``--hap-compile-side`` (compiling takes ~35 s on the CPU), its blocks compared with ours.
* **Its blockwise attention** (the path off CUDA and on CUDA without triton) against PyTorch SDPA over every key,
  at one size (``--hap-time-side``, ``--hap-heads``): medians of interleaved rounds by the wall clock and by a
  second clock (this process's CPU time; CUDA events on a GPU), beside the share of the tokens² entries it computes
  (counted from its chunks) and the share HAP keeps.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..hap import blockwise
from ..hap.block_mask import hap_block_mask
from ..hap.masks import keeps, kept_entries, stride_of
from ..hap.scope_plan import load_plan
from .allocation_trace import traced
from .peak_memory import MIB, allocator_peak_mib, in_child, record_bytes, resident_gauge_problem, resident_peak_mib
from .timing import sync

TEXT, HEADS, DIM, ANCHOR = 512, 24, 128, 32  # FLUX.1 (T5 512 tokens, 24 heads of 128); the official anchor
CALIBRATION_SIDE = 256  # where a real eager build is small enough to run (768 tokens: 135 MiB)


def tokens_of(side: int) -> int:
    return TEXT + (side // 16) ** 2


def half_of(tokens: int, heads: int = HEADS) -> tuple[int, ...]:
    return load_plan().half_widths(0, heads, tokens)


def _official_mask_mod(half: tuple[int, ...], device: torch.device) -> Callable:
    half_t = torch.tensor(half, device=device)
    return lambda b, h, q, k: keeps(q, k, TEXT, half_t[h], stride_of(ANCHOR))


def build(kind: str, side: int, device: torch.device):
    """One BlockMask of HAP at ``side``²: "ours", "eager" or "compiled" ``create_block_mask``."""
    tokens = tokens_of(side)
    if kind == "ours":
        return hap_block_mask(tokens, TEXT, half_of(tokens), ANCHOR, device)
    from torch.nn.attention.flex_attention import create_block_mask

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # _compile=True: what the official code calls
        return create_block_mask(_official_mask_mod(half_of(tokens), device), None, HEADS, tokens, tokens, device,
                                 _compile=kind == "compiled")


def mask_bytes(mask) -> int:
    return sum(t.nbytes for t in mask.as_tuple() if isinstance(t, torch.Tensor))


def same_blocks(ours, theirs) -> bool:
    pairs = [(a, b) for a, b in zip(ours.as_tuple(), theirs.as_tuple(), strict=True) if isinstance(a, torch.Tensor)]
    return all(torch.equal(a.expand_as(b), b) for a, b in pairs)


def mask_figures(sides: list[int], compile_side: int, device: torch.device) -> dict:
    """Every figure of the block-mask rows, in MiB (bytes: ``*_bytes``)."""
    figures: dict = {"sides": {}}
    build("ours", sides[0], device)  # first-call work (imports, lazy initialisation) is not the build's memory
    for side in sides:
        mask, peak, held = record_bytes(lambda s=side: build("ours", s, device), device)
        eager, trace = traced(lambda s=side: build("eager", s, torch.device("meta")))
        figures["sides"][side] = {
            "ours_bytes": mask_bytes(mask), "ours_held": held, "ours_heads": mask.kv_indices.shape[1], "ours_peak": peak / MIB,
            "eager_bytes": mask_bytes(eager), "eager_peak": trace.peak / MIB, "eager_total": trace.total / MIB,
            "ours_second": allocator_peak_mib(lambda s=side: build("ours", s, device), device)
            if device.type == "cuda" else None}
    _, trace = traced(lambda: build("eager", CALIBRATION_SIDE, torch.device("meta")))
    _, peak, _ = record_bytes(lambda: build("eager", CALIBRATION_SIDE, device), device)
    figures["calibration"] = {"traced": trace.peak / MIB, "record": peak / MIB, "second": None}
    if device.type == "cuda":
        figures["calibration"]["second"] = allocator_peak_mib(lambda: build("eager", CALIBRATION_SIDE, device),
                                                              device)
    if compile_side:
        start = time.perf_counter()
        first = build("compiled", compile_side, device)
        sync(device)
        seconds = time.perf_counter() - start
        again, peak, _ = record_bytes(lambda: build("compiled", compile_side, device), device)
        figures["compiled"] = {"side": compile_side, "seconds": seconds, "peak": peak / MIB,
                               "same": same_blocks(build("ours", compile_side, device), first)
                               and same_blocks(first, again), "bytes": mask_bytes(first), "second": None,
                               "ours_peak": record_bytes(lambda: build("ours", compile_side, device), device)[1] / MIB}
        if device.type == "cuda":
            figures["compiled"]["second"] = allocator_peak_mib(lambda: build("compiled", compile_side, device),
                                                               device)
    if device.type == "cpu":
        _resident(figures, sides, compile_side)
    return figures


def _resident(figures: dict, sides: list[int], compile_side: int) -> None:
    """The CPU's second gauge: each build's resident pages' peak, in a process of its own (peak_memory.in_child)."""
    figures["second_name"] = resident_gauge_problem() or "resident pages' peak"
    if resident_gauge_problem():
        return
    peaks = in_child(__name__, "resident_builds", {"sides": sides, "compile_side": compile_side,
                                                   "threads": torch.get_num_threads()})
    for side in sides:
        figures["sides"][side]["ours_second"] = peaks["ours"][str(side)]
    figures["calibration"]["second"] = peaks["calibration"]
    if compile_side:
        figures["compiled"]["second"] = peaks["compiled"]


def resident_builds(payload: dict) -> dict:
    """In the gauge's own process: every build's resident pages' peak on the CPU, each build run once before it is
    measured (first-call work is not the build's memory)."""
    torch.set_num_threads(payload["threads"])
    cpu = torch.device("cpu")

    def warm_peak(kind: str, side: int) -> float:
        build(kind, side, cpu)
        return resident_peak_mib(lambda: build(kind, side, cpu))

    out: dict = {"ours": {str(side): warm_peak("ours", side) for side in payload["sides"]},
                 "calibration": warm_peak("eager", CALIBRATION_SIDE)}
    if payload["compile_side"]:
        out["compiled"] = warm_peak("compiled", payload["compile_side"])
    return out


def work_share(tokens: int, half: int) -> float:
    """The share of the tokens² entries the blockwise path computes: the text rows whole, each chunk its rows x
    (text + span + anchors outside it), counted from its chunks."""
    anchors, *_, chunks = blockwise.chunk_plan(tokens, TEXT, half, ANCHOR, torch.device("cpu"))
    entries = TEXT * tokens + sum((c.rows[1] - c.rows[0]) * (TEXT + c.span[1] - c.span[0] + anchors.numel()
                                                             - (c.anchors[1] - c.anchors[0])) for c in chunks)
    return entries / tokens ** 2


def timing_figures(side: int, heads: int, runs: int, device: torch.device) -> dict:
    """Blockwise HAP against SDPA at ``side``²: medians (ms) by the wall clock and the second clock."""
    tokens = tokens_of(side)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(1, heads, tokens, DIM, generator=gen, device=device).to(dtype) for _ in range(3))
    half = half_of(tokens, heads)
    fns = {"sdpa": lambda: F.scaled_dot_product_attention(q, k, v),
           "hap": lambda: blockwise.masked_attention(q, k, v, TEXT, half, ANCHOR, None)}
    wall: dict[str, list[float]] = {name: [] for name in fns}
    second: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up round, untimed (the chunk plan is built here)
        fn()
    names = list(fns)
    for round_ in range(runs):
        for name in names[round_ % 2:] + names[:round_ % 2]:
            w, s = _clocked(fns[name], device)
            wall[name].append(w)
            second[name].append(s)
    return {"side": side, "tokens": tokens, "heads": heads, "dtype": str(dtype).removeprefix("torch."), "runs": runs,
            "wall": {n: statistics.median(t) for n, t in wall.items()},
            "second": {n: statistics.median(t) for n, t in second.items()},
            "work": work_share(tokens, half[0]), "kept": kept_entries(tokens, TEXT, half[0], ANCHOR) / tokens ** 2,
            "load": os.getloadavg()[0], "threads": torch.get_num_threads(),
            "clock": "CUDA events" if device.type == "cuda" else "CPU time"}


def _clocked(fn: Callable[[], object], device: torch.device) -> tuple[float, float]:
    """(wall ms, second clock ms): this process's CPU time, or on CUDA the stream's events."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        sync(device)
        wall = time.perf_counter()
        start.record()
        fn()
        end.record()
        sync(device)
        return (time.perf_counter() - wall) * 1e3, start.elapsed_time(end)
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
