"""Whole sampling, patched against stock, and the share of it spent building RoPE tables."""

from __future__ import annotations

import statistics
import time

import torch

from ..rope_patch import embedder, ids_check, wrappers
from .model import patched, sample, tiny_flux
from .timing import sync, timed


def whole_sampling(side: int, steps: int, runs: int, blocks: tuple[int, int], device: torch.device) -> dict:
    """Wall time of comfy.sample.sample, patched (DyPE + SEGA: every per-call path of ours) vs stock, interleaved,
    cfg 1 and 3.5 (one CFG batch of 2: both prompts have the same length), and the time spent building RoPE tables
    inside it (stock: EmbedND; patched: our schedule, SEGA spectrum and allocation, table, ids check)."""
    from comfy.ldm.flux.layers import EmbedND


    # One model per variant (same weights): clones of one model would re-patch it each time they take turns.
    models = {"stock": tiny_flux(*blocks, 1, device), "dype+sega": patched(tiny_flux(*blocks, 1, device), sega=True)}
    rope_work = {"stock": [(EmbedND, "forward")],
                 "dype+sega": [(embedder.ExtrapolatingRopeEmbedder, "forward"), (wrappers, "build_call_scope"),
                               (ids_check.WindowChecks, "file"), (ids_check.WindowChecks, "poll"),
                               (wrappers, "ids_signature")]}
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
                    sync(device)
                    times[name].append(time.perf_counter() - start)
        out[cfg] = {name: (statistics.median(v), min(v), max(v), rope[name][0] / sum(v)) for name, v in times.items()}
    return out
