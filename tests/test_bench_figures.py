"""The cost figures the pages print (README's "What it costs", docs/imax.md's "Cost and memory"), computed here from
what ``python <pack> bench`` computes and looked up in the pages, so a page cannot drift from the bench. No timing
(BENCHMARKS.md has the times); HRDiT's figures are held in tests/test_bench_hrdit.py.

* One FLUX.1-dev model call at 4096² is counted twice: the cascades' formula (hiflow_rows.call_flops) and PyTorch's
  FLOP counter over ComfyUI's own Flux at FLUX.1-dev's config on the meta device (model_flops.py). The README's
  compute floor is 28 such calls at the H100 SXM's bf16 dense peak.
* I-Max's parts, from the bench's real_flops over the calls its tiny run files (base 30 calls, then 15 steps on the
  swin-padded grid and 15 on the plain one at 4x).
* SEGA recipe paper's per-step FLOPs, counted under FlopCounterMode over the bench's own paper call and by formula.
"""

from __future__ import annotations

from pathlib import Path

import host
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
IMAX_PAGE = " ".join((ROOT / "docs" / "imax.md").read_text(encoding="utf-8").split())
TOKENS_4096 = 256 * 256


def _bench(name: str):
    return host.pack_submodule(f"nodes.bench.{name}")


@pytest.fixture(scope="module")
def bench_flops(comfy_host):
    return _bench("hiflow_rows"), _bench("model_flops")


def test_one_flux_dev_call_is_counted_twice(bench_flops):
    rows, model_flops = bench_flops
    for side in (1024, 4096):
        counted = model_flops.flux_dev_call_flops(side)
        assert counted == pytest.approx(rows.call_flops((side // 16) ** 2), rel=5e-4), side  # embedders, norms: < 0.05 %
    assert round(model_flops.flux_dev_call_flops(4096) / 1e15, 1) == 3.9


def test_the_readme_gives_the_h100_floor_it_computes(bench_flops):
    """28 steps (the FLUX.1 workflows') at 4096², one call a step (cfg 1), at the H100 SXM's 989.4 TFLOPS: 111 s
    (the bench's 30-step pass: 119 s); at the RTX 4090's 165.2: 11 min."""
    _, model_flops = bench_flops
    call = model_flops.flux_dev_call_flops(4096)
    assert round(30 * call / model_flops.H100_SXM_BF16_DENSE) == 119
    floor = round(28 * call / model_flops.H100_SXM_BF16_DENSE)
    minutes = round(28 * call / model_flops.RTX_4090_BF16_DENSE / 60)
    assert (minutes, floor) == (11, 111) and f"are {minutes} min and {floor} s." in README
    assert "28 steps" in README and "6–10 min on an H100" in README


def _imax_calls(base: int, duplicated: bool = True) -> float:
    rows = _bench("hiflow_rows")
    grids = [(base, base, 1, 16)] * 30 + [(4 * base + 2, 4 * base + 2, 1, 16)] * 15 + [(4 * base, 4 * base, 1, 16)] * 15
    return rows.real_flops(grids, [base, 4 * base], base, duplicated=duplicated)


def test_imax_parts_as_the_page_gives_them(comfy_host):
    """The base pass 1.9 % of one pass, swin's padded steps 0.7 % (without text duplication: 1.026x in all), text
    duplication the other 21.8 % (1.244x): docs/imax.md, "Cost and memory"."""
    rows = _bench("hiflow_rows")
    one = 30 * rows.call_flops(TOKENS_4096)
    base = 30 * rows.call_flops(64 * 64)
    plain = _imax_calls(4, duplicated=False)
    padded = plain - base - 30 * rows.call_flops(TOKENS_4096)
    whole = _imax_calls(4)
    assert (round(whole / one, 3), round(plain / one, 3)) == (1.244, 1.026)
    figures = {"base": f"{100 * base / one:.1f} %", "padded": f"{100 * padded / one:.1f} %",
               "duplication": f"{100 * (whole - plain) / one:.1f} %"}
    assert figures == {"base": "1.9 %", "padded": "0.7 %", "duplication": "21.8 %"}
    assert (f"the base pass adds {figures['base']} of one pass ({base / 1e15:.1f} PFLOP) and swin's padded steps (257² tokens on 15 "
            f"of the 30 steps at 4096²) {figures['padded']}; text duplication adds the other {figures['duplication']}"
            in IMAX_PAGE)
    assert f"**{whole / one:.2f}× the model FLOPs" in IMAX_PAGE and f"it would be {plain / one:.2f}×" in IMAX_PAGE
    assert f"({whole / 1e15:.1f} PFLOP against {one / 1e15:.1f})" in IMAX_PAGE


def test_the_paper_recipe_costs_what_the_readme_says(comfy_host):
    """SEGA recipe paper's per-step work at Flux 4096² B1: its patch embedding, 25.8 GFLOP counted (FlopCounterMode
    over the bench's own SEGA-paper call) and by formula, about 7·10⁻⁶ of one FLUX.1-dev call there."""
    import torch

    embedder = _bench("embedder_rows")
    counted, formula, model_call = embedder.paper_flops(embedder.Case("flux", 4096, 1), torch.device("cpu"))
    assert counted == formula and round(counted / 1e9, 1) == 25.8
    share = counted / model_call
    assert round(share, 6) == 7e-6
    assert f"{round(counted / 1e9)} GFLOP at 4096², about 7·10⁻⁶ of one FLUX.1-dev model call" in README
