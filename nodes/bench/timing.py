"""The bench's clocks: medians of interleaved rounds, the engine's profiler labels counted and timed (peak memory:
peak_memory.py)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fns: dict[str, Callable[[], object]], repeats: int, device: torch.device) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up round, untimed
        fn()
    names = list(fns)
    for round_ in range(repeats):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # rotate: no variant always first
            fn = fns[name]
            sync(device)
            start = time.perf_counter()
            fn()
            sync(device)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def labelled(fn: Callable[[], object], labels: Sequence[str]) -> tuple[dict[str, int], dict[str, float], float]:
    """Run ``fn`` under the profiler: per label (torch.profiler.record_function, the engine's own: config.py), how
    many times it ran and its wall seconds (host side), and the run's wall seconds."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        fn()
        wall = time.perf_counter() - start
    counts = {label: 0 for label in labels}
    seconds = {label: 0.0 for label in labels}
    for event in prof.events():
        if event.name in counts:
            counts[event.name] += 1
            seconds[event.name] += event.time_range.elapsed_us() / 1e6
    return counts, seconds, wall
