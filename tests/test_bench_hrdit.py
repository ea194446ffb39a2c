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
  entry by entry against the official mask_mod);
* the 128 x 128 tiles FlexAttention computes whole (torch's default BLOCK_SIZE, which the official
  create_block_mask keeps): counted here tile pair by tile pair from each tile's 64-token blocks, and the bench's
  count (nodes/bench/hap_cost.py) held to FlexAttention's own BlockMask on the CPU at small sizes.
"""

from __future__ import annotations

import importlib

import pytest
from host import PACK_NAME, import_pack

import_pack()
rows = importlib.import_module(f"{PACK_NAME}.nodes.bench.hiflow_rows")
hap_cost = importlib.import_module(f"{PACK_NAME}.nodes.bench.hap_cost")
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


def _tiles_by_pairs(side_tokens: int) -> int:
    """Tiles of 128 tokens (two 64-token blocks) holding a kept entry, of (side_tokens² + 512)² / 128²: the 4 text
    tiles' rows and columns all; an image tile pair when one of its 2 x 2 block pairs is within the band or its key
    tiles' blocks include an anchor block (a multiple of 32)."""
    text_tiles, image_tiles = TEXT // 128, side_tokens**2 // 128
    tiles = text_tiles + image_tiles
    kept = tiles**2 - image_tiles**2
    for qt in range(image_tiles):
        for kt in range(image_tiles):
            pairs = [(2 * qt + i, 2 * kt + j) for i in (0, 1) for j in (0, 1)]
            kept += any(abs(qb - kb) <= HALF or kb % ANCHOR == 0 for qb, kb in pairs)
    return kept


def _call(side_tokens: int, attentions: float = 1.0) -> float:
    """One FLUX.1-dev call: 57 blocks of 24·d²·N (projections) + attentions x 4·d·N² (QKᵀ and AV)."""
    n = side_tokens**2 + TEXT
    return LAYERS * (24 * D**2 * n + attentions * 4 * D * n**2)


def _share(side: int, hap: str) -> float:
    tokens = side**2 + TEXT
    if hap == "tiles":
        return _tiles_by_pairs(side) * 128**2 / tokens**2
    return 1.0 if hap == "dense" else _kept_by_intervals(side) / tokens**2


def _hand_count(hap: str = "entries", spa_variants: int = SPA_VARIANTS_2048) -> float:
    kept = {side: _share(side, hap) for side in (128, 256)}
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
@pytest.mark.parametrize("hap", ["entries", "tiles", "dense"])
def test_the_hrdit_flops_row_is_the_hand_count(base, hap):
    grids, records, nominal = _official_calls(base)
    counted = rows.real_flops(grids, nominal, base, attention=records, hap=hap)
    assert counted == pytest.approx(_hand_count(hap), rel=1e-12)


def test_the_kept_shares_and_the_headline_ratios():
    """The shares and figures docs/hrdit.md cites, and the ratios to one 4096² pass (30 dense calls) the bench prints
    (BENCHMARKS.md)."""
    assert round(_kept_by_intervals(128) / (128**2 + TEXT) ** 2, 3) == 0.299
    assert round(_kept_by_intervals(256) / (256**2 + TEXT) ** 2, 3) == 0.104
    one_pass = 30 * _call(256)
    assert round(_hand_count() / one_pass, 3) == 0.162
    assert round(_hand_count("dense") / one_pass, 3) == 0.423
    assert round(one_pass / 1e15, 1) == 117.2 and round(_hand_count() / 1e15, 1) == 19.0
    assert round((_hand_count() - _hand_count(spa_variants=1)) / 1e15, 2) == 0.36  # SPA's extra attentions
    assert round((_hand_count("dense") - _hand_count("dense", spa_variants=1)) / 1e15, 1) == 1.2


def test_the_tile_shares_and_the_ratio_a_gpu_runs():
    """What FlexAttention computes: 33.1 % of the tiles at 2048², 13.6 % at 4096² (the kept entries: 29.9 %,
    10.4 %), which makes the cascade 0.172x one pass (20.1 PFLOP), by the hand count and by the bench's."""
    plan = load_plan()
    for side, share in ((128, 0.331), (256, 0.136)):
        tokens = side**2 + TEXT
        assert round(_share(side, "tiles"), 3) == share
        assert hap_cost.kept_tiles(tokens, TEXT, HALF, ANCHOR) == _tiles_by_pairs(side)
        assert hap_cost.hap_share(plan, ANCHOR, tokens, TEXT, True) == pytest.approx(_share(side, "tiles"), rel=1e-12)
    one_pass = 30 * _call(256)
    assert round(_hand_count("tiles") / one_pass, 3) == 0.172 and round(_hand_count("tiles") / 1e15, 1) == 20.1


def _flex_tiles(tokens: int, text: int, half: int, anchor: int) -> int:
    """Tiles FlexAttention's own BlockMask computes (partial and full blocks) for HAP's mask, one head, on the CPU
    (create_block_mask evaluates the mask densely there: small sizes only)."""
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    import torch

    stride = anchor if anchor > 0 else 1 << 30

    def mask_mod(b, h, q, k):  # hrdit/hap.py mask_mod at e4aa8c6, with this call's text length
        qb, kb = (q - text) // 64, (k - text) // 64
        return (q < text) | (k < text) | ((qb - kb).abs() <= half) | (kb % stride == 0)

    mask = flex.create_block_mask(mask_mod, B=None, H=None, Q_LEN=tokens, KV_LEN=tokens, device="cpu")
    computed = mask.kv_num_blocks.sum() + (0 if mask.full_kv_num_blocks is None else mask.full_kv_num_blocks.sum())
    assert mask.BLOCK_SIZE == (hap_cost.TILE, hap_cost.TILE)
    return int(computed.to(torch.int64))


@pytest.mark.parametrize("tokens,text,half,anchor", [
    (512 + 48 * 48, 512, 3, 32), (512 + 48 * 48, 512, 1, 8), (512 + 40 * 40, 512, 5, 0),
    (77 + 37 * 41, 77, 2, 6), (16 + 32 * 32, 16, 0, 3), (300 + 45 * 45, 300, 4, 5)])
def test_the_bench_counts_the_tiles_flex_attention_computes(tokens, text, half, anchor):
    """The bench's tile count against FlexAttention's BlockMask, at aligned and unaligned text lengths, partial last
    tiles, narrow and wide bands, the anchor on and off."""
    assert hap_cost.kept_tiles(tokens, text, half, anchor) == _flex_tiles(tokens, text, half, anchor)


@pytest.mark.parametrize("mutant", ["64-token tiles", "no text rows", "anchor ignored", "band width as half"])
def test_the_tile_check_catches_a_miscount(mutant):
    """Each plausible miscount of the tiles differs from FlexAttention's BlockMask in one of the cases above."""
    cases = [(512 + 48 * 48, 512, 3, 32), (77 + 37 * 41, 77, 2, 6), (16 + 32 * 32, 16, 0, 3)]
    kept_tiles = hap_cost.kept_tiles

    def counted(tokens, text, half, anchor):
        if mutant == "64-token tiles":
            return kept_tiles(tokens, text, half, anchor, tile=64) // 4
        if mutant == "no text rows":
            return kept_tiles(tokens - text, 0, half, anchor)
        if mutant == "anchor ignored":
            return kept_tiles(tokens, text, half, 1 << 30)
        return kept_tiles(tokens, text, 2 * half + 1, anchor)

    assert any(counted(*case) != _flex_tiles(*case) for case in cases)


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
    assert row["flops_dense_hap"] == pytest.approx(_hand_count("dense"), rel=1e-12)
    assert row["flops_tiles_hap"] == pytest.approx(_hand_count("tiles"), rel=1e-12)
    assert round(row["flops"] / one_pass, 3) == 0.162


def test_the_pages_print_the_counted_figures():
    """docs/hrdit.md's cost table and the README's HRDiT figures are the hand counts above, each way HAP is counted."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = " ".join((root / "docs" / "hrdit.md").read_text(encoding="utf-8").split())
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    one_pass = 30 * _call(256)
    shares = {hap: [f"{100 * _share(side, hap):.1f} %" for side in (128, 256)] for hap in ("entries", "tiles")}
    for hap in ("entries", "tiles"):
        ratio = _hand_count(hap) / one_pass
        row = (f"| {' / '.join(shares[hap])} | {_hand_count(hap) / 1e15:.1f} | **{ratio:.3f}×** |")
        assert row in page, row
        assert f"{ratio:.2f}×" in readme
    assert f"| 100 % | {_hand_count('dense') / 1e15:.1f} | {_hand_count('dense') / one_pass:.3f}× |" in page
    for hap, taken in (("tiles", 59), ("entries", 62)):
        assert round(100 * (1 - _hand_count(hap) / _hand_count("dense"))) == taken
    assert "takes 59 % off the cascade's model FLOPs there (62 % by the kept entries)" in page
    spa = {hap: (_hand_count(hap) - _hand_count(hap, spa_variants=1)) / 1e15 for hap in ("tiles", "entries", "dense")}
    assert (f"add {spa['tiles']:.2f} PFLOP as a GPU runs them ({spa['entries']:.2f} by the kept entries, "
            f"{spa['dense']:.1f} counted dense)") in page
    assert f"in whole 128×128 tiles: {shares['tiles'][1]} of the attention at 4096²), 0.16× counting the kept " \
           f"entries alone ({shares['entries'][1]})" in readme
