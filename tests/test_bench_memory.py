"""The bench's memory gauge (nodes/bench/peak_memory.py) reads one call's peak whatever profiler labels wrap it, and its
two gauges agree on stock's and the pack's call (issue 34: the old gauge replayed the profiler's op tree, where a free
inside a label counts at the label's start, and read 64.5 MiB for stock's 163 under one label).

Not a measurement of the pack (that is ``python <pack> bench``): the first test's call has a peak known to the byte,
the others compare the gauge with itself and with the second gauge.
"""

from __future__ import annotations

import contextlib

import host
import pytest
import torch

MIB = 2**20


def _gauge():
    return host.pack_submodule("nodes.bench.peak_memory")


def _known_peak() -> None:
    """Allocates 8 MiB, 4 MiB, frees the 8, allocates 2: the peak above the start is 12 MiB."""
    a = torch.empty(2 * MIB).fill_(1.0)
    b = torch.empty(MIB).fill_(2.0)
    with torch.profiler.record_function("free inside a label"):
        del a
    c = torch.empty(MIB // 2).fill_(3.0)
    del b, c


def _labelled(fn, label: str = "one label around the call"):
    def run():
        with torch.profiler.record_function(label):
            return fn()

    return run


@pytest.mark.parametrize("labels", [0, 1, 2], ids=["bare", "one label", "two labels"])
def test_a_known_peak_reads_exactly_under_any_labels(labels):
    fn = _known_peak
    for depth in range(labels):
        fn = _labelled(fn, f"label {depth}")
    assert _gauge().record_peak_mib(fn, torch.device("cpu")) == pytest.approx(12.0, abs=0.01)


@pytest.fixture(scope="module")
def flux_2048_calls(comfy_host):
    """Stock's EmbedND and the pack's yarn call at Flux 2048² B1 (the bench's case builder), one warm call each."""
    bench = host.pack_submodule("nodes.bench.embedder_rows")
    fns, stock_path = bench.case_calls(bench.Case("flux", 2048, 1), torch.device("cpu"))
    assert not stock_path
    with torch.no_grad():
        for name in ("stock", "yarn"):
            fns[name]()
    return fns


def test_stock_reads_the_same_with_and_without_a_label(flux_2048_calls):
    gauge, cpu = _gauge(), torch.device("cpu")
    with torch.no_grad():
        bare = gauge.record_peak_mib(flux_2048_calls["stock"], cpu)
        wrapped = gauge.record_peak_mib(_labelled(flux_2048_calls["stock"]), cpu)
    table = (512 + 128 * 128) * 64 * 4 * 4 / MIB  # EmbedND's float32 output alone: every token's 64 2x2 blocks
    assert bare > 2 * table  # stock builds float64 tables per axis before the float32 one
    assert wrapped == pytest.approx(bare, rel=1e-3)


def test_the_pack_reads_the_same_without_its_own_labels(flux_2048_calls, monkeypatch):
    """The engine's own labels (schedule, table) wrap frees too: switched off, the gauge reads the same."""
    gauge, cpu = _gauge(), torch.device("cpu")
    with torch.no_grad():
        with_labels = gauge.record_peak_mib(flux_2048_calls["yarn"], cpu)
        monkeypatch.setattr(torch.profiler, "record_function", lambda name: contextlib.nullcontext())
        without = gauge.record_peak_mib(flux_2048_calls["yarn"], cpu)
    assert with_labels == pytest.approx(without, rel=1e-3)


def test_both_gauges_agree_on_stock_and_ours(comfy_host):
    """The bench's memory row at Flux 2048² B1: the allocation record here and the resident pages of a process of
    its own agree on every variant (else the bench prints no ratio)."""
    gauge = _gauge()
    problem = gauge.resident_gauge_problem()
    if problem:
        pytest.skip(f"no resident-pages gauge on this machine: {problem}")
    bench = host.pack_submodule("nodes.bench.embedder_rows")
    peaks = bench.memory_row(bench.Case("flux", 2048, 1), torch.device("cpu"))
    assert set(peaks) == {"stock", "yarn", "sega", "paper", "dype_paper"}
    for name, peak in peaks.items():
        assert peak.agrees(), (name, peak)
        assert peak.record > 4, (name, peak)  # at least the 4.3 MiB float32 table
