"""SPA's bundles (rope/spa.py) and HAP's masks and attention (nodes/hap/) against the independent transcription of
the official HRDiT code (tests/hrdit_reference.py), at odd sizes and 3:1, and the mutations each check catches.
Pure torch: no ComfyUI."""

from __future__ import annotations

import importlib
import warnings

import hrdit_reference as ref
import pytest
import torch
from host import PACK_NAME, import_pack

import_pack()
spa = importlib.import_module(f"{PACK_NAME}.rope.spa")
masks = importlib.import_module(f"{PACK_NAME}.nodes.hap.masks")
kernel = importlib.import_module(f"{PACK_NAME}.nodes.hap.kernel")
scope_plan = importlib.import_module(f"{PACK_NAME}.nodes.hap.scope_plan")

CPU = torch.device("cpu")  # where these float64 bundles are made (the pack hands its rule's device)
SMALL = [(37, 111), (111, 37), (7, 13), (1, 5), (13, 1), (60, 20)]  # odd sizes and 3:1
BUNDLE_CASES = ([(grid, g) for grid in SMALL for g in (80, 17, 5, 2)]
                + [((256, 256), 80), ((128, 128), 80), ((64, 64), 80), ((192, 64), 80), ((100, 300), 17)])


def _with_text(img_ids: torch.Tensor, text: int) -> torch.Tensor:
    return torch.cat([torch.zeros(text, 3, dtype=img_ids.dtype), img_ids])


@pytest.mark.parametrize("grid,group_num", BUNDLE_CASES)
def test_bundled_ids_match_the_official_variants(grid, group_num):
    img_ids = ref.image_ids(*grid)
    expected = ref.bundle_id_variants(img_ids, group_num)
    ours = spa.bundled_ids(_with_text(img_ids, 7)[None], (1, 2), grid, group_num, CPU)
    assert len(ours) == len(expected) == spa.variant_count(*grid, group_num)
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine[0, 7:], theirs)
        assert torch.equal(mine[0, :7], torch.zeros(7, 3, dtype=torch.float64))  # text ids stay 0


def test_variant_counts_at_the_official_sizes():
    """FLUX.1 (16 px a token, group_num 80): 4096² → bundles of 4, 7 variants; 2048² → 2, 3; 1024² → one
    variant, the identity (bundles of 1 from boundary 1)."""
    assert (spa.bundle_size(256, 80), spa.variant_count(256, 256, 80)) == (4, 7)
    assert (spa.bundle_size(128, 80), spa.variant_count(128, 128, 80)) == (2, 3)
    assert spa.variant_count(64, 64, 80) == 1
    ids = ref.image_ids(64, 64)
    assert torch.equal(spa.bundled_ids(ids[None], (1, 2), (64, 64), 80, CPU)[0][0], ids)
    assert spa.variant_boundaries(4, 4) == [(4, 4), (1, 4), (2, 4), (3, 4), (4, 1), (4, 2), (4, 3)]
    assert spa.variant_count(192, 64, 80) == 3  # 3:1: rows in bundles of 3 (3 variants), columns of 1 (none)
    with pytest.raises(ValueError, match="group_num"):
        spa.bundle_size(10, 1)


def _plan(alphas, betas):
    return scope_plan.ScopePlan(tuple(tuple(r) for r in alphas), tuple(tuple(r) for r in betas))


def test_the_official_plan_is_uniform_and_its_bands():
    plan = scope_plan.load_plan()
    assert (plan.layers, plan.heads, plan.uniform) == (57, 24, True)
    assert plan.fits(2, 2) == ""  # one scope for every head: any model shape
    for tokens in (512 + 128 ** 2, 512 + 256 ** 2, 512 + 16):
        band = ref.band_blocks(plan.alphas[0], plan.betas[0], tokens)
        assert plan.half_widths(30, 24, tokens) == tuple((b - 1) // 2 for b in band) == (31,) * 24
    custom = _plan([[64.0, 700.0, 0.0], [128.0, 64.0, 1000.0]], [[0.0, 0.05, 0.3], [0.01, 0.0, 0.0]])
    for layer in (0, 1):
        band = ref.band_blocks(custom.alphas[layer], custom.betas[layer], 3000)
        assert custom.half_widths(layer, 3, 3000) == tuple((b - 1) // 2 for b in band)
    assert "2 layers x 3 heads" in custom.fits(4, 3)
    with pytest.raises(ValueError, match="same layers x heads"):
        _plan([[1.0]], [[1.0, 2.0]])


CASES = [  # (text, image tokens, half-widths per head, anchor)
    (40, 300, (0, 1, 2), 0),
    (40, 300, (0, 1, 2), 2),
    (13, 257, (1, 0), 3),
    (5, 400, (1,), 4),
]


@pytest.mark.parametrize("text,image,half,anchor", CASES)
def test_keep_mask_and_kept_entries_match_the_official_mask(text, image, half, anchor):
    tokens = text + image
    expected = ref.hap_keep(tokens, [2 * h + 1 for h in half], anchor, text_len=text)
    cols = torch.arange(tokens)
    ours = masks.keep_mask(cols, cols, text, torch.tensor(half), anchor)
    assert torch.equal(ours, expected)
    for head, h in enumerate(half):
        assert masks.kept_entries(tokens, text, h, anchor) == int(expected[head].sum())
    assert not expected.all()  # the case prunes something


def test_the_official_text_length_and_512():
    """With the official 512-token prompts our mask (text = the call's text) is the official one, TEXT_LEN 512."""
    tokens = 512 + 160
    expected = ref.hap_keep(tokens, [3], 2)
    cols = torch.arange(tokens)
    assert torch.equal(masks.keep_mask(cols, cols, 512, torch.tensor([1]), 2), expected)


@pytest.mark.parametrize("flex", [False, True])
@pytest.mark.parametrize("text,image,half,anchor", CASES[:3])
def test_hap_attention_is_dense_attention_on_the_kept_entries(flex, text, image, half, anchor):
    if flex and not kernel.flex_available():
        pytest.skip("this torch has no FlexAttention")
    torch.manual_seed(0)
    tokens, heads, dim = text + image, len(half), 16
    q, k, v = (torch.randn(2, heads, tokens, dim) for _ in range(3))
    keep = ref.hap_keep(tokens, [2 * h + 1 for h in half], anchor, text_len=text)
    scale = ref.proportional_scale(tokens, dim)
    expected = ref.attention(q, k, v, scale, keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FlexAttention without torch.compile on the CPU says it is unfused
        if flex:
            ours = kernel.flex_hap_attention(q, k, v, text, half, anchor, scale, compiled=False)
        else:
            ours = kernel.masked_attention(q, k, v, text, half, anchor, scale)
    assert (ours.double() - expected).abs().max() < 2e-6
    assert (ref.attention(q, k, v, scale) - expected).abs().max() > 1e-2  # pruning changes the result here


MUTANTS = {
    "floor instead of ceil": lambda x, n1, s: torch.where(x < n1, 0.0, torch.floor((x + 1 - n1) / s)),
    "boundary shifted": lambda x, n1, s: torch.where(x <= n1, 0.0, torch.ceil((x + 1 - n1) / s)),
    "bundles of size + 1": lambda x, n1, s: torch.where(x < n1, 0.0, torch.ceil((x + 1 - n1) / (s + 1))),
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_the_bundle_check_catches_a_wrong_phi(name, monkeypatch):
    monkeypatch.setattr(spa, "bundle_positions", lambda x, n1, s: MUTANTS[name](x.double(), n1, s))
    img_ids = ref.image_ids(37, 111)
    expected = ref.bundle_id_variants(img_ids, 17)
    ours = spa.bundled_ids(img_ids[None], (1, 2), (37, 111), 17, CPU)
    assert any(not torch.equal(a[0], b) for a, b in zip(ours, expected, strict=True))


def test_the_variant_check_catches_a_wrong_order(monkeypatch):
    img_ids = ref.image_ids(200, 100)  # bundles of 3 and 2
    expected = ref.bundle_id_variants(img_ids, 80)
    monkeypatch.setattr(spa, "variant_boundaries", lambda r, c: [(r, c)] + [(r, m) for m in range(1, c)]
                        + [(n, c) for n in range(1, r)])  # the official order with rows and columns swapped
    ours = spa.bundled_ids(img_ids[None], (1, 2), (200, 100), 80, CPU)
    assert any(not torch.equal(a[0], b) for a, b in zip(ours, expected, strict=True))


def _mask_mutants(tokens: int, text: int, half: int, anchor: int) -> dict[str, torch.Tensor]:
    """Plausible wrong ports of ``mask_mod``: the cases above must tell each from the official mask."""
    q, k = torch.arange(tokens)[:, None], torch.arange(tokens)[None, :]
    qb, kb = torch.div(q - text, 64, rounding_mode="floor"), torch.div(k - text, 64, rounding_mode="floor")
    band, seen = (qb - kb).abs() <= half, (q < text) | (k < text)
    stride = anchor if anchor > 0 else 1 << 30
    anchors = torch.remainder(kb, stride) == 0
    return {
        "no anchor at all when it is off": seen | band | (anchors & (anchor > 0)),
        "text queries not global": (k < text) | band | anchors,
        "blocks counted from token 0": seen | ((q // 64 - k // 64).abs() <= half) | (torch.remainder(k // 64, stride) == 0),
        "band one block narrower": seen | ((qb - kb).abs() < half) | anchors,
    }


@pytest.mark.parametrize("text,image,half,anchor", [(40, 300, 1, 0), (40, 300, 2, 2), (13, 257, 1, 3)])
def test_the_mask_cases_catch_wrong_ports(text, image, half, anchor):
    official = ref.hap_keep(text + image, [2 * half + 1], anchor, text_len=text)[0]
    for name, mutant in _mask_mutants(text + image, text, half, anchor).items():
        if name == "no anchor at all when it is off" and anchor:
            continue  # that mutant differs only with the anchor off
        assert not torch.equal(mutant, official), name
    plan = _plan([[64.0]], [[0.05]])
    image_only = max(2 * int(64 // 64 + 0.05 * (image // 64)) - 1, 1)  # nbx without the text tokens
    assert (image_only - 1) // 2 != plan.half_widths(0, 1, text + image + 3000)[0]


def _kernel_error(device: str, dtype: torch.dtype, flex: bool | None) -> float:
    """hap_kernel with a plan of half-widths (0, 1, 2) on CASES[1], against the reference on the kept entries."""
    text, image, half, anchor = CASES[1]
    tokens = text + image
    keep = ref.hap_keep(tokens, [2 * h + 1 for h in half], anchor, text_len=text)
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, len(half), tokens, 64) for _ in range(3))
    expected = ref.attention(q, k, v, 64 ** -0.5, keep)
    run = kernel.hap_kernel(_plan([[64.0 * (h + 1) for h in half]], [[0.0] * len(half)]), anchor, flex=flex)
    call = type("Call", (), {"grid": (1, image), "layer": lambda self, options: 0})()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FlexAttention without torch.compile on the CPU says it is unfused
        out = run(*(t.to(device, dtype) for t in (q, k, v)), len(half), call, {"skip_output_reshape": True})
    assert out.device.type == device
    return float((out.double().cpu() - expected).abs().max())


@pytest.mark.parametrize("flex", [False, True])
def test_hap_kernel_through_its_plan_on_the_cpu(flex):
    """Its CUDA twin (compiled FlexAttention, fp32 and bf16) is in tests/test_cuda.py."""
    if flex and not kernel.flex_available():
        pytest.skip("this torch has no FlexAttention")
    assert _kernel_error("cpu", torch.float32, flex) < 2e-6


def _kept_by_mask_mod(tokens: int, half: int, anchor: int, text: int = 512) -> int:
    """The official ``mask_mod`` evaluated for every key of one query per row kind (a query reads only q < text and
    its block), each row's True entries counted and weighted by how many queries share that row (Python floor
    division and modulo, as hrdit_reference.hap_keep): the second measure of the kept share, independent of
    kept_entries' per-block count."""
    keys = torch.arange(tokens)
    key_block = torch.div(keys - text, 64, rounding_mode="floor")
    stride = anchor if anchor > 0 else 1 << 30
    queries = torch.arange(text, tokens, 64)  # the first query of each image block
    weights = torch.clamp(tokens - queries, max=64)
    query_block = torch.div(queries - text, 64, rounding_mode="floor")[:, None]
    keep = (keys < text)[None] | ((query_block - key_block[None]).abs() <= half) \
        | (torch.remainder(key_block, stride) == 0)[None]
    return text * tokens + int((keep.sum(1) * weights).sum())  # a text query keeps every key


@pytest.mark.parametrize("side,share", [(2048, 0.299), (4096, 0.104)])
def test_the_official_kept_shares_are_counted_twice(side, share):
    """docs/hrdit.md's 29.9 % (2048²) and 10.4 % (4096²): the authors' plan at FLUX.1's 16 px tokens with 512 text
    tokens and anchor 32, per block (kept_entries, kept_share) and entry by entry (the official mask_mod)."""
    tokens = 512 + (side // 16) ** 2
    (width,) = ref.band_blocks([2048.0], [0.0], tokens)
    half = (width - 1) // 2
    assert masks.kept_entries(tokens, 512, half, 32) == _kept_by_mask_mod(tokens, half, 32)
    plan = scope_plan.load_plan()
    assert round(masks.kept_share(plan, 57, 24, tokens, 512, 32), 3) == share
