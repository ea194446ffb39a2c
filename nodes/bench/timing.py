"""The bench's clocks: medians of interleaved rounds, peak memory of one call, time spent inside given functions."""

from __future__ import annotations

import contextlib
import functools
import statistics
import time
from collections.abc import Callable, Iterator, Sequence

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


def peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """Peak memory allocated while ``fn`` runs, above what was allocated before (MiB)."""
    if device.type == "cuda":
        sync(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        sync(device)
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
