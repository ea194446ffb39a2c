"""scripts/gpu-check.sh, the GPU check for a bare GPU machine (docs/development.md, "The one GPU check"), as far as a
machine without a GPU can check it: its time plan fits the device's command, the CUDA tests it runs are all the
suite's, a missing carried set is one line, and the no-GPU mode (what CI runs) collects and skips the CUDA tests
on both hosts and returns at most what the device tool brings back. That the carried set is complete is
``bash scripts/gpu-check.sh --dry-run`` (every phase on the CPU in the machine's package set, minutes: CI runs it
after ``bash scripts/gpu-carry.sh``, .ci/run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gpu-check.sh"
DEVICE_COMMAND_S = 600  # the device tool's longest command
PLAN_S = 480  # issue 34: the whole check in at most 8 minutes


def _run(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, check=False)


def test_the_plan_fits_eight_minutes_most_valuable_first():
    result = _run("--plan")
    assert result.returncode == 0, result.stderr
    phases = re.findall(r"^\s+\d\.\s+(\d+) s  (.+)$", result.stdout, re.MULTILINE)
    seconds = [int(s) for s, _ in phases]
    names = [name for _, name in phases]
    assert len(phases) == 6 and all(0 < s <= 150 for s in seconds), phases
    assert sum(seconds) <= PLAN_S < DEVICE_COMMAND_S
    assert f"{sum(seconds)} s  in all" in result.stdout
    order = ["CUDA tests", "per-call time and peak memory at 4096²", "whole sampling", "the cascades"]
    positions = [next(i for i, name in enumerate(names) if name.startswith(word)) for word in order]
    assert positions == sorted(positions), names


def test_every_cuda_test_is_in_the_file_the_check_runs():
    """The machine runs tests/test_cuda.py only (collecting every module would need every test's packages)."""
    marked = [path.name for path in (REPO / "tests").glob("test_*.py")
              if re.search(r"mark\.cuda\b|\bcuda\(\"cuda\"", path.read_text(encoding="utf-8"))]
    assert marked == ["test_cuda.py"], marked


def test_a_missing_carried_set_is_one_line(tmp_path):
    result = _run("--dry-run", env={"GPU_CHECK_CARRY": str(tmp_path / "none")})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "no carried set at" in result.stderr and "bash scripts/gpu-carry.sh" in result.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU here: the check would run for real")
def test_without_a_gpu_it_collects_and_skips_the_cuda_tests_on_both_hosts(tmp_path):
    result = _run(env={"OUT": str(tmp_path)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "no NVIDIA GPU on this machine" in result.stdout
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert 0 < len(files) <= 8 and all(len(p.relative_to(tmp_path).parts) <= 3 for p in files), files
    table = (tmp_path / "gpu-check" / "summary.md").read_text(encoding="utf-8")
    hosts = ["0.3.75"] + (["0.30"] if (REPO / ".hosts" / "comfyui-0.30.0").is_dir() else [])
    for host in hosts:
        assert f"ComfyUI {host}" in table
    rows = [line for line in table.splitlines() if line.startswith("| test_")]
    assert rows and all("| skip |" in row for row in rows), table
    assert all("CUDA-only" in row for row in rows), table


def test_the_count_line_names_what_failed(tmp_path):
    report = tmp_path / "report.xml"
    report.write_text('<testsuite><testcase name="a" time="1"/><testcase name="b"><failure message="boom"/>'
                      '</testcase><testcase name="c"><skipped message="no GPU"/></testcase></testsuite>',
                      encoding="utf-8")
    line = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check_summary.py"), "--count", str(report)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert line == "1 passed, 1 failed, 1 skipped (b)"
