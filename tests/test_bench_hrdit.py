"""The HRDiT column of ``bench --only hiflow`` (nodes/bench/hiflow_rows.py): its FLUX.1-dev FLOPs against a count by
hand. No timing here (BENCHMARKS.md has the times).

The hand count writes down what the official run makes (zylwithxy/HRDiT e4aa8c6 inference.py, docs/hrdit.md): 30
base calls at 1024² (64² tokens), 17 at 2048² (128²) of which the first 3 run SPA, 10 at 4096² (256²), HAP on every
stage call; 512 text tokens. Its parts are derived here from the official formulas, not from the pack's functions:

* SPA's variants at 128 tokens a side with group_num 80: bundle size ceil(127 / 79) = 2, so (2, 2), (1, 2), (2, 1):
  3 attentions a block on an SPA step (hrdit/spa.py's order, docs/hrdit.md);
* HAP's kept entries: the shipped plan's alpha 2048, beta 0 gives a band of max(2·int(2048 // 64) − 1, 1) = 63
  blocks, half-width 31; anchor stride 32; text rows and columns all kept. The image part is counted over block
  pairs by interval arithmetic below (the pack's kept_entries counts with a tensor, test_hrdit_math.py checks it
  entry by entry against the official mask_mod).
"""

from __future__ import annotations

import importlib

import pytest
from host import PACK_NAME, import_pack

import_pack()
rows = importlib.import_module(f"{PACK_NAME}.nodes.bench.hiflow_rows")
hap_kernel = importlib.import_module(f"{PACK_NAME}.nodes.hap.kernel").hap_kernel
load_plan = importlib.import_module(f"{PACK_NAME}.nodes.hap.scope_plan").load_plan

D, LAYERS, TEXT = 3072, 57, 512
HALF, ANCHOR = 31, 32
SPA_VARIANTS_2048 = 3


def _kept_by_intervals(side_tokens: int) -> int:
    """Kept (query, key) entries of one head at side_tokens² image tokens + 512 text: per query block, the band
    [qb − 31, qb + 31] clipped to the image, plus the anchor blocks (multiples of 32) outside it."""
    blocks = side_tokens**2 // 64
    pairs = 0
    for qb in range(blocks):
        low, high = max(0, qb - HALF), min(blocks - 1, qb + HALF)
        anchors_outside = sum(1 for kb in range(0, blocks, ANCHOR) if kb < low or kb > high)
        pairs += (high - low + 1) + anchors_outside
    image, tokens = side_tokens**2, side_tokens**2 + TEXT
    return TEXT * tokens + image * TEXT + pairs * 64 * 64


def _call(side_tokens: int, attentions: float = 1.0) -> float:
    """One FLUX.1-dev call: 57 blocks of 24·d²·N (projections) + attentions x 4·d·N² (QKᵀ and AV)."""
    n = side_tokens**2 + TEXT
    return LAYERS * (24 * D**2 * n + attentions * 4 * D * n**2)


def _hand_count(dense_hap: bool = False, spa_variants: int = SPA_VARIANTS_2048) -> float:
    kept = {side: 1.0 if dense_hap else _kept_by_intervals(side) / (side**2 + TEXT) ** 2 for side in (128, 256)}
    return (30 * _call(64) + 3 * _call(128, spa_variants * kept[128]) + 14 * _call(128, kept[128])
            + 10 * _call(256, kept[256]))


def _official_calls(base: int):
    """The grids and attention records the bench files for the official HRDiT run with a tiny base of ``base``
    latent px (cfg 1: one call a step), as counting.attention_of reads them from the stage clones."""
    kernel = hap_kernel(load_plan(), ANCHOR)
    grids = [(base, base, 1, 16)] * 30 + [(2 * base, 2 * base, 1, 16)] * 17 + [(4 * base, 4 * base, 1, 16)] * 10
    records = [(False, None)] * 30 + [(True, kernel)] * 3 + [(False, kernel)] * 14 + [(False, kernel)] * 10
    return grids, records, [base, 2 * base, 4 * base]


@pytest.mark.parametrize("base", [4, 16])
@pytest.mark.parametrize("dense_hap", [False, True])
def test_the_hrdit_flops_row_is_the_hand_count(base, dense_hap):
    grids, records, nominal = _official_calls(base)
    counted = rows.real_flops(grids, nominal, base, attention=records, dense_hap=dense_hap)
    assert counted == pytest.approx(_hand_count(dense_hap), rel=1e-12)


def test_the_kept_shares_and_the_headline_ratios():
    """The shares and figures docs/hrdit.md cites, and the ratios to one 4096² pass (30 dense calls) the bench prints
    (BENCHMARKS.md)."""
    assert round(_kept_by_intervals(128) / (128**2 + TEXT) ** 2, 3) == 0.299
    assert round(_kept_by_intervals(256) / (256**2 + TEXT) ** 2, 3) == 0.104
    one_pass = 30 * _call(256)
    assert round(_hand_count() / one_pass, 3) == 0.162
    assert round(_hand_count(dense_hap=True) / one_pass, 3) == 0.423
    assert round(one_pass / 1e15, 1) == 117.2 and round(_hand_count() / 1e15, 1) == 19.0
    assert round((_hand_count() - _hand_count(spa_variants=1)) / 1e15, 2) == 0.36  # SPA's extra attentions
    assert round((_hand_count(True) - _hand_count(True, spa_variants=1)) / 1e15, 1) == 1.2


@pytest.mark.parametrize("mutant", ["no SPA", "SPA on 4 steps", "HAP dense on one call", "one call fewer"])
def test_the_row_catches_a_miscount(mutant):
    """Each way the bench could miscount the run moves its figure off the hand count."""
    grids, records, nominal = _official_calls(4)
    if mutant == "no SPA":
        records = [(False, kernel) for _, kernel in records]
    elif mutant == "SPA on 4 steps":
        records[33] = (True, records[33][1])
    elif mutant == "HAP dense on one call":
        records[-1] = (False, None)
    else:
        grids, records = grids[:-1], records[:-1]
    counted = rows.real_flops(grids, nominal, 4, attention=records)
    assert counted != pytest.approx(_hand_count(), rel=1e-6)


def test_the_recorded_attention_is_what_ran(comfy_host, monkeypatch):
    """The bench's per-call records (counting.attention_of, read from the options) against the attention that
    actually ran: HAP's kernel counted at each invocation on the tiny FLUX (1 double + 1 single block). Per round,
    14 + 10 stage calls attend once a block and the 3 SPA calls once per variant (3 on the tiny 2x grid with the
    bench's group_num): (24 + 3 x 3) x 2 = 66 invocations; the bench runs a warm-up round and one timed round."""
    import torch

    hrdit = importlib.import_module(f"{PACK_NAME}.nodes.cascade.hrdit")
    real_kernel, invocations = hrdit.hap_kernel, []

    def counted_kernel(plan, anchor):
        inner = real_kernel(plan, anchor)

        def kernel(q, k, v, heads, call, kwargs, **extra):
            invocations.append(call.spa_on)
            return inner(q, k, v, heads, call, kwargs, **extra)

        kernel.plan, kernel.anchor = inner.plan, inner.anchor
        return kernel

    monkeypatch.setattr(hrdit, "hap_kernel", counted_kernel)
    row = rows.hiflow_row(32, 1, torch.device("cpu"))["HRDiT"]
    assert (row["spa_calls"], row["hap_calls"], row["calls"], row["tiny_group_num"]) == (3, 27, 57, 3)
    assert len(invocations) == 2 * 66 and invocations.count(True) == 2 * 18
    one_pass = 30 * _call(256)
    assert row["flops"] == pytest.approx(_hand_count(), rel=1e-12)
    assert row["flops_dense_hap"] == pytest.approx(_hand_count(dense_hap=True), rel=1e-12)
    assert round(row["flops"] / one_pass, 3) == 0.162
