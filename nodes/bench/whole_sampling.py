"""Whole sampling, patched against stock, and the share of it spent building RoPE tables."""

from __future__ import annotations

import statistics
import time

import torch

from ..rope_patch.config import LABEL_SCHEDULE, LABEL_TABLE
from .model import patched, sample, tiny_flux
from .timing import labelled, sync

STOCK_TABLE = "bench.stock_table"  # the label the bench puts on ComfyUI's own EmbedND (forward hooks)


def _label_stock_embedder(model) -> None:
    """Label every forward of the stock model's EmbedND for the profiler (module hooks: nothing replaced)."""
    embedder = model.get_model_object("diffusion_model.pe_embedder")
    open_labels = []

    def enter(module, args):
        open_labels.append(torch.profiler.record_function(STOCK_TABLE))
        open_labels[-1].__enter__()

    def leave(module, args, output):
        open_labels.pop().__exit__(None, None, None)

    embedder.register_forward_pre_hook(enter)
    embedder.register_forward_hook(leave)


def whole_sampling(side: int, steps: int, runs: int, blocks: tuple[int, int], device: torch.device) -> dict:
    """Wall time of comfy.sample.sample, patched (DyPE + SEGA: every per-call path of ours) vs stock, interleaved,
    cfg 1 and 3.5 (one CFG batch of 2: both prompts have the same length), the ratio of each round's pair, and the
    share of one more (profiled) run spent building RoPE tables (stock: EmbedND; patched: the engine's labels,
    schedule with SEGA's spectrum and allocation, and table)."""
    # One model per variant (same weights): clones of one model would re-patch it each time they take turns.
    models = {"stock": tiny_flux(*blocks, 1, device), "dype+sega": patched(tiny_flux(*blocks, 1, device), sega=True)}
    _label_stock_embedder(models["stock"])
    labels = {"stock": (STOCK_TABLE,), "dype+sega": (LABEL_SCHEDULE, LABEL_TABLE)}
    for model in models.values():  # warm-up: load, first-call work, allocator
        sample(model, side // 2, 1, 1.0)
    out = {}
    for cfg in (1.0, 3.5):
        times = {name: [] for name in models}
        names = list(models)
        for round_ in range(runs):  # rotate: neither variant always goes first
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                start = time.perf_counter()
                sample(models[name], side, steps, cfg)
                sync(device)
                times[name].append(time.perf_counter() - start)
        shares = {}
        for name, model in models.items():
            def run(model=model, cfg=cfg):
                sample(model, side, steps, cfg)
                sync(device)

            _, seconds, wall = labelled(run, labels[name])
            shares[name] = sum(seconds.values()) / wall
        out[cfg] = {name: (statistics.median(v), min(v), max(v), shares[name]) for name, v in times.items()}
        # Paired by round: both variants of one round ran back to back, so a load change hits them alike.
        ratios = [ours / stock for ours, stock in zip(times["dype+sega"], times["stock"], strict=True)]
        out[cfg]["ratio"] = (statistics.median(ratios), min(ratios), max(ratios))
    return out
