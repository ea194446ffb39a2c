"""``python <pack> bench --only hap`` (nodes/bench/hap_rows.py, hap_report.py, allocation_trace.py): the trace that
stands in for an eager ``create_block_mask`` too large to run agrees with the allocator's record of real builds,
and the part prints its rows and one summary line per figure. Not timed: only what it measures with is checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from patching import _pack

PACK = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind,side", [("eager", 256), ("ours", 2048), ("ours", 4096)])
def test_the_meta_trace_is_the_allocators_record(kind, side):
    """Traced on the meta device (shapes only) and run for real on the CPU (the profiler's record of every
    allocation): the same peak within 1 % (measured: within 200 bytes), the reductions' inner casts included."""
    rows = _pack("nodes.bench.hap_rows")
    trace = _pack("nodes.bench.allocation_trace")
    gauge = _pack("nodes.bench.peak_memory")
    rows.build(kind, side, torch.device("cpu"))  # first-call work is not the build's
    _, traced = trace.traced(lambda: rows.build(kind, side, torch.device("meta")))
    _, peak, _ = gauge.record_bytes(lambda: rows.build(kind, side, torch.device("cpu")), torch.device("cpu"))
    assert traced.peak == pytest.approx(peak, rel=0.01)
    if kind == "eager":
        assert traced.peak >= 24 * rows.tokens_of(side) ** 2  # its heads x tokens² bool at least


def test_without_the_reductions_casts_the_trace_misses_most_of_eager(monkeypatch):
    """The inner copy of a reduction over a differently typed input (ATen's make_reduction) is most of the eager
    build's peak: the trace without it reads far under the allocator, so the check above can fail."""
    rows = _pack("nodes.bench.hap_rows")
    trace = _pack("nodes.bench.allocation_trace")
    gauge = _pack("nodes.bench.peak_memory")
    monkeypatch.setattr(trace, "CASTING_REDUCTIONS", ())
    _, traced = trace.traced(lambda: rows.build("eager", 256, torch.device("meta")))
    _, peak, _ = gauge.record_bytes(lambda: rows.build("eager", 256, torch.device("cpu")), torch.device("cpu"))
    assert traced.peak < 0.5 * peak


def test_only_hap_prints_its_rows(tmp_path):
    import host

    env = {**os.environ, "COMFYUI_PATH": str(host.comfyui_root())}
    summary = tmp_path / "summary.txt"
    result = subprocess.run([sys.executable, str(PACK), "bench", "--only", "hap", "--hap-sides", "1024",
                             "--hap-compile-side", "0", "--hap-time-side", "1024", "--hap-runs", "1", "--summary",
                             str(summary)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
                            check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Per model call" not in result.stdout
    for row in ("| BlockMask, MiB (its tensors; ours: also held after the build) | FLUX.1 1024², 4608 tokens | ",
                "| build peak, MiB (ours: allocation record / ", "| the trace's check: eager build peak, MiB ",
                "| attention time, ms (median of 1 interleaved rounds: wall / CPU time) | FLUX.1 1024², 4608 tokens, "
                "1 head(s) of 128, float32"):
        assert row in result.stdout, row
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4, lines  # the machine, then one line per figure
    assert lines[1].startswith("HAP block mask, FLUX.1 1024², 4608 tokens, 24 heads: ours BlockMask 0.02 MiB")
    assert "build peak 4.7 GiB (traced on the meta device)" in lines[1], lines[1]
    assert lines[2].startswith("HAP block mask trace check, eager create_block_mask at FLUX.1 256², 768 tokens: "
                               "traced 135 MiB, real build 135 / "), lines[2]
    assert "(disagree)" not in lines[2]
    assert lines[3].startswith("HAP blockwise attention vs SDPA, FLUX.1 1024², 4608 tokens, 1 head(s) of 128"), lines[3]
    assert "HAP keeps 80.3 %" in lines[3], lines[3]
