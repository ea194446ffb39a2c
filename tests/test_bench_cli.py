"""``python <pack> bench``'s command line: every bad argument and a missing ComfyUI are one line and exit status 2,
never a traceback, and all of it is decided before ComfyUI boots.

In-process through the pack's ``__main__`` (as tests/test_hf_energy.py does) with ``COMFYUI_PATH`` pointing at an
empty folder: a bad argument must be reported instead of that folder, so the arguments are checked first, and
none of those can boot ComfyUI. The entry point runs in a subprocess twice: without ComfyUI, and once whole at the
smallest sizes on the test host, where only what it prints is checked (its timings are not a test: BENCHMARKS.md).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACK = Path(__file__).resolve().parents[1]


def _bench_here(capsys, *args: str) -> tuple[int, str]:
    spec = importlib.util.spec_from_file_location("dype_sega_cli", PACK / "__main__.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    try:
        code = cli.main(["bench", *args])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


@pytest.mark.parametrize(("args", "message"), [
    (["--sides", "-5"], "argument --sides: must be between 16 and 65536, a multiple of 16, got -5"),
    (["--sides", "1000"], "argument --sides: must be between 16 and 65536, a multiple of 16, got 1000"),
    (["--sides"], "argument --sides: expected at least one argument"),
    (["--qwen-sides", "0"], "argument --qwen-sides: must be between 16"),
    (["--repeats", "0"], "argument --repeats: must be between 1 and 1000, got 0"),
    (["--repeats", "two"], "argument --repeats: expected an integer, got 'two'"),
    (["--batch", "0"], "argument --batch: must be between 1 and 64, got 0"),
    (["--batch", "1", "-2"], "argument --batch: must be between 1 and 64, got -2"),
    (["--threads", "0"], "argument --threads: must be between 1 and 1024, got 0"),
    (["--sampling-side", "100"], "argument --sampling-side: must be 0 or between 64 and 65536, a multiple of 32"),
    (["--sampling-runs", "0"], "argument --sampling-runs: must be between 1 and 100, got 0"),
    (["--blocks", "0", "0"], "argument --blocks: the model needs at least one block"),
    (["--blocks", "-1", "1"], "argument --blocks: must be between 0 and 64, got -1"),
    (["--output", "{tmp}"], "is a directory; give a Markdown file"),
    (["--output", "{tmp}/no/such/dir/bench.md"], "does not exist"),
    (["--summary", "{tmp}"], "is a directory; give a"),
    (["--only", "everything"], "argument --only: invalid choice: 'everything'"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
])
def test_a_bad_argument_is_one_line_before_comfyui_is_looked_for(capsys, monkeypatch, tmp_path, args, message):
    monkeypatch.setenv("COMFYUI_PATH", str(tmp_path))  # no ComfyUI there: an argument error must come first
    code, err = _bench_here(capsys, *[a.format(tmp=tmp_path) for a in args])
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert "COMFYUI_PATH" not in err


def test_a_folder_without_comfyui_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COMFYUI_PATH", str(tmp_path))
    code, err = _bench_here(capsys, "--sides", "256", "--qwen-sides", "--batch", "1", "--repeats", "1")
    assert code == 2
    assert err.endswith(f" bench: error: COMFYUI_PATH={tmp_path} is not a ComfyUI checkout (no comfy/ folder in it)\n")
    assert err.count("\n") == 1, err


def test_no_comfyui_at_all_is_one_line_from_the_shell(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("COMFYUI_PATH", "PYTHONPATH")}
    probe = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('comfy') is None)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True)
    if probe.stdout.strip() != "True":
        pytest.skip("`comfy` imports in this interpreter without COMFYUI_PATH: the bench would run, not fail")
    result = subprocess.run([sys.executable, str(PACK), "bench"], capture_output=True, text=True, cwd=tmp_path,
                            env=env, timeout=120, check=False)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "ComfyUI not found" in result.stderr, result.stderr
    assert "COMFYUI_PATH=/path/to/ComfyUI" in result.stderr


def test_the_smallest_whole_run_prints_its_tables(tmp_path):
    """The command end to end on this host, as a user runs it, at sizes that take seconds (not timed: only what it
    prints is checked)."""
    import host

    env = {**os.environ, "COMFYUI_PATH": str(host.comfyui_root())}
    summary = tmp_path / "summary.txt"
    result = subprocess.run([sys.executable, str(PACK), "bench", "--sides", "1024", "--qwen-sides", "--batch", "1",
                             "--repeats", "1", "--sampling-side", "64", "--sampling-runs", "1", "--hiflow-side", "0",
                             "--hap-sides", "--hap-time-side", "0", "--no-compile", "--summary", str(summary)],
                            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{os.cpu_count()} CPUs" in result.stdout
    for row in ("| Flux 1024² B1 |", "| stock code path | stock code path | – |",
                "| whole sampling, s (median [min–max] of 1) |",
                "| whole sampling, ours / stock of each round (median [min–max]) |", "Bench wall time:"):
        assert row in result.stdout, row
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("Machine: ") and len(lines) == 4, lines  # the machine, then one line per figure
    assert lines[1].startswith("per-call time, Flux 1024² B1: stock code path"), lines[1]
    assert all(line.startswith("whole sampling, Flux 64², 2 blocks, 4 steps, cfg ") for line in lines[2:]), lines


def test_one_part_alone_prints_its_figures(tmp_path):
    """``--only hiflow`` (what scripts/gpu-check.sh runs as its own phase): the cascades' table with the tiny model's
    counted FLOPs beside its time, HRDiT's calls as the official run makes them (tests/test_bench_hrdit.py counts
    their FLOPs by hand: 0.162 of one pass), the note that HAP saves no time on the CPU, and nothing else measured."""
    import host

    env = {**os.environ, "COMFYUI_PATH": str(host.comfyui_root())}
    summary = tmp_path / "summary.txt"
    result = subprocess.run([sys.executable, str(PACK), "bench", "--only", "hiflow", "--hiflow-side", "32",
                             "--hiflow-runs", "1", "--summary", str(summary)], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Per model call" not in result.stdout and "Per run:" not in result.stdout
    assert "| FLOPs of those model calls on the tiny model, GFLOP (counted; " in result.stdout
    assert "| the same calls, CPU time of this process, s (a second clock) |" in result.stdout  # the test host: CPU
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5, lines
    for line, name in zip(lines[1:4], ("HiFlow", "I-Max", "HRDiT"), strict=True):
        assert line.startswith(f"{name} vs one pass, tiny FLUX 32² -> 128²: model-call time "), line
        assert "(CPU time " in line and "beside the tiny model's FLOPs" in line, line
    assert ("FLUX.1-dev model FLOPs 0.162 (HAP's kept entries), 0.172 with HAP's whole 128x128 tiles (what "
            "FlexAttention computes on a GPU), HAP counted dense 0.423; on the CPU HAP runs blockwise over its"
            in lines[3])
    assert lines[4] == (  # README's floor: one FLUX.1-dev call counted twice, at the H100's bf16 dense peak
        "One pass at FLUX.1-dev size: 30 calls at 4096x4096, each 3.908 PFLOP counted by PyTorch's FLOP counter on "
        "ComfyUI's Flux at FLUX.1-dev's config (meta device), 3.908 by the formula of the rows above; at an H100 SXM's "
        "bf16 dense peak (989.4 TFLOPS) its 30 calls take at least 119 s, 28 of them 111 s (an RTX 4090's, 165.2 "
        "TFLOPS: 11 min)."), lines[4]
    assert ("| measure | one pass | HiFlow | HiFlow/one pass | I-Max | I-Max/one pass | HRDiT | HRDiT/one pass |"
            in result.stdout)
    assert ("HRDiT's model calls at FLUX.1-dev size: 30 at 1024x1024 (dense); 14 at 2048x2048 (HAP keeps 29.9 % of the "
            "entries, 33.1 % of the tiles); 3 at 2048x2048 (HAP keeps 29.9 % of the entries, 33.1 % of the tiles, SPA 3 "
            "attentions a block); 10 at 4096x4096 (HAP keeps 10.4 % of the entries, 13.6 % of the tiles). The tiny run: "
            "SPA with group_num 3 (the real run's variants per stage on the tiny grids), 3 SPA calls, 27 HAP calls"
            in result.stdout)
    assert "| the same, HRDiT's HAP as FlexAttention computes it on a GPU: whole 128x128 tiles, PFLOP |" in result.stdout
    # the shares the FLUX.1 notes' compute floors take (tests/headless/floors.py): HiFlow's and I-Max's model FLOPs,
    # HRDiT's as a GPU runs HAP
    from headless import floors

    rows = {cells[0]: [cell.strip(" |") for cell in cells] for cells in
            (line.split(" | ") for line in result.stdout.splitlines()) if len(cells) == 8}
    model = next(cells for label, cells in rows.items() if label.startswith("| FLOPs of the model calls at FLUX.1-dev"))
    tiles = next(cells for label, cells in rows.items() if "whole 128x128 tiles" in label)
    assert (float(model[3]), float(model[5]), float(tiles[7])) == tuple(floors.SHARES.values()), (model, tiles)
