"""The compute floor each FLUX.1 note gives beside its hand-set time estimate (tests/headless/floors.py): its formula
and card peaks are the bench's, its one-pass floor is the README's, and every FLUX.1 note that estimates a time, or
runs a cascade, carries the floor of its own run as the saved workflow file shows it. The cascades' shares are held
to what `bench --only hiflow` prints in tests/test_bench_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import host
import pytest
from headless import floors

ROOT = Path(__file__).resolve().parents[1]
#: workflow number -> its run's FLOPs (one pass: width, height, steps; a cascade: its rule and base steps)
RUNS = {
    "01": floors.one_pass(4096, 4096, 28), "02": floors.one_pass(4096, 4096, 28),
    "03": floors.one_pass(3840, 2160, 28), "04": floors.one_pass(4096, 4096, 28),
    "26": floors.cascade("HiFlow"), "27": floors.cascade("HiFlow"), "28": floors.cascade("HiFlow", 18),
    "35": floors.cascade("I-Max"), "36": floors.cascade("HRDiT"), "37": floors.cascade("HRDiT"),
}


def _note(number: str) -> str:
    (path,) = sorted((ROOT / "workflows").glob(f"{number} *.json"))
    notes = [node["widgets_values"][0] for node in json.loads(path.read_text(encoding="utf-8"))["nodes"]
             if node["type"] in ("Note", "MarkdownNote")]
    return "\n".join(notes)


def test_the_formula_and_peaks_are_the_bench_s(comfy_host):
    rows = host.pack_submodule("nodes.bench.hiflow_rows")
    model_flops = host.pack_submodule("nodes.bench.model_flops")
    for width, height in ((1024, 1024), (3840, 2160), (4096, 1360), (4096, 4096)):
        assert floors.call_flops(width, height) == rows.call_flops((width // 16) * (height // 16)), (width, height)
    assert (floors.H100, floors.RTX_4090) == (model_flops.H100_SXM_BF16_DENSE, model_flops.RTX_4090_BF16_DENSE)


def test_the_one_pass_floor_is_the_readme_s():
    """The README's 111 s and 11 min (held to the bench in tests/test_bench_figures.py)."""
    line = floors.floor_line(floors.one_pass(4096, 4096, 28))
    assert "at least 111 s, of an RTX 4090 11 min." in line, line


@pytest.mark.parametrize("number", sorted(RUNS))
def test_each_flux_note_gives_its_own_run_s_floor(number):
    note = _note(number)
    expected = [line for line in note.splitlines() if line.startswith("- Floor:")]
    assert expected == [floors.floor_line(RUNS[number], "; HAP as FlexAttention computes it" if number in ("36", "37")
                                          else "")], (number, expected)
    assert "**Memory and time (estimates, not measurements)" in note


def test_an_image_s_shorter_base_pass_lowers_the_floor():
    """28 runs the last 18 of the 30 base steps: 12 calls at 1024² fewer than 26."""
    assert floors.cascade("HiFlow") - floors.cascade("HiFlow", 18) == 12 * floors.call_flops(1024, 1024)
    assert floors.cascade("HiFlow", 18) < floors.cascade("HiFlow") < floors.one_pass(4096, 4096, 30)
