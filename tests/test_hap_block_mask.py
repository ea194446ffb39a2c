"""HAP's block mask (nodes/hap/block_mask.py), built from its 64-token blocks, against FlexAttention's own
``create_block_mask`` run eagerly on the official ``mask_mod`` (tests/hrdit_reference.py, zylwithxy/HRDiT e4aa8c6
hrdit/hap.py): every tensor of the BlockMask identical, at odd text lengths, images that are not a multiple of 64
or 128, anchors on and off and several half-widths; and its build's memory, which must grow with the tiles², not
the tokens². The compiled ``create_block_mask`` (``_compile=True``, the official call) is compared in the bench
(``python <pack> bench --only hap``), on the GPU in scripts/gpu-check.sh. Pure torch: no ComfyUI."""

from __future__ import annotations

import importlib
import itertools
import warnings

import hrdit_reference as ref
import pytest
import torch
from host import PACK_NAME, import_pack
from largest_allocation import largest_allocation

import_pack()
block_mask = importlib.import_module(f"{PACK_NAME}.nodes.hap.block_mask")
kernel = importlib.import_module(f"{PACK_NAME}.nodes.hap.kernel")

pytestmark = pytest.mark.skipif(not kernel.flex_available(), reason="this torch has no FlexAttention")

# (text, image tokens): odd text, images below one block, at 64 and 128 edges, not multiples of either
SHAPES = [(0, 1), (1, 63), (37, 64), (13, 129), (300, 700), (512, 1000), (128, 256)]
HALVES = [(0,), (1,), (31,), (1, 0, 2), (2, 2, 5)]
ANCHORS = [0, 1, 3, 32]
CASES = [(t, i, h, a) for (t, i), h, a in itertools.product(SHAPES, HALVES, ANCHORS)
         if (t, i) in SHAPES[:5] or a in (0, 32)]


def _tensors(mask) -> list[torch.Tensor]:
    return [t for t in mask.as_tuple() if isinstance(t, torch.Tensor)]


def _eager(tokens: int, text: int, half: tuple[int, ...], anchor: int, heads: int, device: str = "cpu"):
    from torch.nn.attention.flex_attention import create_block_mask

    return create_block_mask(ref.official_mask_mod(list(half), anchor, text), None, heads, tokens, tokens, device)


def _assert_same(ours, theirs) -> None:
    assert ours.seq_lengths == theirs.seq_lengths and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
    mine, official = _tensors(ours), _tensors(theirs)
    assert len(mine) == len(official) == 8
    for a, b in zip(mine, official, strict=True):
        assert a.dtype == b.dtype and torch.equal(a.expand_as(b), b)


@pytest.mark.parametrize("text,image,half,anchor", CASES)
def test_the_block_mask_is_eager_create_block_mask(text, image, half, anchor):
    """Ours against ``create_block_mask`` with the official per-head mask_mod and H = the heads (the official
    H=24 form): one head when the half-widths agree, which equals each of theirs and H=1's."""
    tokens = text + image
    ours = block_mask.hap_block_mask(tokens, text, half, anchor, torch.device("cpu"))
    assert ours.kv_indices.shape[1] == (1 if len(set(half)) == 1 else len(half))
    _assert_same(ours, _eager(tokens, text, half, anchor, len(half)))
    if len(set(half)) == 1:
        _assert_same(ours, _eager(tokens, text, half, anchor, 1))


def check_block_mask_on(device: str) -> None:
    """A sample of the cases built on ``device`` (tests/test_cuda.py: on the GPU, float64 counts and the argsort
    there) against create_block_mask on the same device."""
    for text, image, half, anchor in CASES[::6]:
        tokens = text + image
        ours = block_mask.hap_block_mask(tokens, text, half, anchor, torch.device(device))
        assert ours.kv_indices.device.type == device
        _assert_same(ours, _eager(tokens, text, half, anchor, len(half), device))


def _stretched(occ: torch.Tensor) -> torch.Tensor:
    """Occupancy whose last, short tile is scaled up to a whole one: the padding counted as kept."""
    rows = occ.sum(1, keepdim=True)
    return torch.where(rows < block_mask.TILE, occ * block_mask.TILE / rows, occ)


def test_the_cases_tell_a_wrong_edge_from_the_right_one(monkeypatch):
    """A build that forgets that tokens past the sequence are dropped (so an edge tile can be full) differs from
    create_block_mask in some of the cases above: the comparison can fail."""
    real = block_mask.occupancy
    monkeypatch.setattr(block_mask, "occupancy", lambda tokens, text, device: _stretched(real(tokens, text, device)))
    differ = 0
    for text, image, half, anchor in CASES[::4]:
        ours = block_mask.hap_block_mask(text + image, text, half, anchor, torch.device("cpu"))
        theirs = _eager(text + image, text, half, anchor, len(half))
        differ += not all(torch.equal(a.expand_as(b), b) for a, b in zip(_tensors(ours), _tensors(theirs), strict=True))
    assert differ


@pytest.mark.parametrize("half", [(2,), (1, 0, 2)])
def test_flex_attention_takes_the_mask_over_every_head(half):
    """The one-head mask (same half-width everywhere) broadcasts over three query heads in FlexAttention (eager,
    on the CPU; compiled on CUDA in tests/test_cuda.py); the per-head one reads each head's own."""
    from torch.nn.attention.flex_attention import flex_attention

    text, image, anchor = 37, 700, 3
    tokens = text + image
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, tokens, 16) for _ in range(3))
    halves = half * 3 if len(half) == 1 else half
    keep = torch.stack([ref.keep_rows(torch.arange(tokens), tokens, h, anchor, text) for h in halves])
    mask = block_mask.hap_block_mask(tokens, text, halves, anchor, torch.device("cpu"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FlexAttention without torch.compile on the CPU says it is unfused
        out = flex_attention(q, k, v, block_mask=mask, scale=0.25)
    assert (out.double() - ref.attention(q, k, v, 0.25, keep)).abs().max() < 2e-6


#: bytes a pair of 128 x 128 tiles may take in one tensor of the build, per head of the mask: ours needs 32 (its
#: class mask: about 4 class pairs a tile pair, float64) and 8 a head (the int64 argsort of the tiles); a mask of
#: the tokens takes 16384 (one bool a token pair)
BYTES_PER_TILE_PAIR = 64


@pytest.mark.parametrize("half", [(31,) * 24, (31, 4, 1)])
def test_the_build_memory_grows_with_tiles_not_tokens(half):
    """At two sequences (FLUX.1's 1024² and 2048², 512 text tokens) the largest tensor the build creates stays
    within BYTES_PER_TILE_PAIR per tile pair and head of the mask; eager create_block_mask, measured the same way
    at the smaller size, is over a hundred times that (its padded heads x tokens² bool), so the test can fail."""
    mask_heads = 1 if len(set(half)) == 1 else len(half)
    for side in (1024, 2048):
        tokens = 512 + (side // 16) ** 2
        tiles = -(-tokens // 128)
        largest = largest_allocation(lambda t=tokens: block_mask.hap_block_mask(t, 512, half, 32, torch.device("cpu")))
        assert largest <= BYTES_PER_TILE_PAIR * max(mask_heads, 1) * tiles ** 2, (side, largest)
    tokens = 512 + (512 // 16) ** 2
    tiles = -(-tokens // 128)
    eager = largest_allocation(lambda: _eager(tokens, 512, half, 32, len(half)))
    assert eager >= len(half) * tokens ** 2 > 100 * BYTES_PER_TILE_PAIR * mask_heads * tiles ** 2
