"""HAP's attention without FlexAttention (nodes/hap/blockwise.py) and which path the kernel takes (kernel.py):
exact against dense attention restricted to the official mask's kept entries (tests/hrdit_reference.py,
zylwithxy/HRDiT e4aa8c6 hrdit/hap.py), the injectable ``attend``, memory per chunk that does not grow with
tokens², and triton checked as inductor checks it. Pure torch: no ComfyUI."""

from __future__ import annotations

import importlib
import itertools
import logging

import hrdit_reference as ref
import pytest
import torch
import torch.nn.functional as F
from host import PACK_NAME, import_pack
from largest_allocation import largest_allocation

import_pack()
blockwise = importlib.import_module(f"{PACK_NAME}.nodes.hap.blockwise")
kernel = importlib.import_module(f"{PACK_NAME}.nodes.hap.kernel")
scope_plan = importlib.import_module(f"{PACK_NAME}.nodes.hap.scope_plan")

CASES = [(t, i, h, a) for (t, i), h, a in itertools.product(
    [(0, 1), (1, 63), (37, 129), (13, 700), (64, 1000)],
    [(0,), (1,), (3,), (1, 0, 2), (2, 5, 2)],
    [0, 1, 3, 32]) if i < 700 or a in (0, 3)]


def _keep(tokens: int, text: int, half: tuple[int, ...], anchor: int) -> torch.Tensor:
    rows = torch.arange(tokens)
    return torch.stack([ref.keep_rows(rows, tokens, h, anchor, text) for h in half])


@pytest.mark.parametrize("text,image,half,anchor", CASES)
def test_blockwise_is_dense_attention_on_the_kept_entries(text, image, half, anchor):
    torch.manual_seed(0)
    tokens = text + image
    q, k, v = (torch.randn(2, len(half), tokens, 8) for _ in range(3))
    expected = ref.attention(q, k, v, 0.3, _keep(tokens, text, half, anchor))
    out = blockwise.masked_attention(q, k, v, text, half, anchor, 0.3)
    assert out.shape == q.shape and (out.double() - expected).abs().max() < 2e-6


def test_the_check_catches_a_band_one_block_short(monkeypatch):
    """Chunks whose span stops a block early (the band's last block missing) fail the comparison above."""
    real = blockwise.chunk_plan

    def short(tokens, text, half, anchor, device):
        *tensors, chunks = real(tokens, text, half, anchor, device)
        cut = tuple(type(c)(c.rows, (c.span[0], max(c.span[0], c.span[1] - 64)), c.anchors,
                            None if c.keep is None else c.keep[:, :-1]) for c in chunks)
        return (*tensors, cut)

    monkeypatch.setattr(blockwise, "chunk_plan", short)
    monkeypatch.setattr(blockwise, "TABLES", type(blockwise.TABLES)())
    with pytest.raises(AssertionError):
        test_blockwise_is_dense_attention_on_the_kept_entries(13, 700, (1, 0, 2), 3)


class Recorder:
    """An ``attend`` that records what it is given and answers with PyTorch SDPA in float64."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, ...], torch.Tensor | None]] = []

    def __call__(self, q, k, v, mask, scale):
        self.calls.append((tuple(k.shape), mask))
        return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask,
                                              scale=scale).to(q.dtype)


def test_attend_is_what_every_piece_runs_through():
    """``attend(q, k, v, mask, scale)`` gets every piece (text rows unmasked; image chunks with None or a bool
    (1, 1, rows, keys) mask within MASK_ENTRIES), through masked_attention and through the kernel's keyword."""
    text, image, half, anchor = 40, 1500, (2, 2, 5), 32
    tokens = text + image
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, len(half), tokens, 8) for _ in range(3))
    expected = ref.attention(q, k, v, 0.3, _keep(tokens, text, half, anchor))
    record = Recorder()
    out = blockwise.masked_attention(q, k, v, text, half, anchor, 0.3, attend=record)
    assert (out.double() - expected).abs().max() < 1e-6
    assert record.calls[0] == ((1, 3, tokens, 8), None)  # the text queries: every key
    masks = [m for _, m in record.calls[1:] if m is not None]
    assert masks and all(m.dtype == torch.bool and m.shape[:2] == (1, 1) for m in masks)
    assert all(m.shape[2] * m.shape[3] <= blockwise.MASK_ENTRIES for m in masks)
    assert all(shape[2] < tokens for shape, _ in record.calls[1:])  # chunks attend a part of the keys

    plan = scope_plan.ScopePlan(((64.0 * 3,) * 2 + (64.0 * 6,),), ((0.0,) * 3,))  # half-widths 2, 2, 5
    call = type("Call", (), {"grid": (1, image), "layer": lambda self, options: 0})()
    by_kernel = Recorder()
    run = kernel.hap_kernel(plan, anchor, flex=False)
    out = run(q, k, v, 3, call, {"scale": 0.3, "skip_output_reshape": True}, attend=by_kernel)
    assert len(by_kernel.calls) == len(record.calls) and (out.double() - expected).abs().max() < 1e-6
    given = Recorder()
    kernel.hap_kernel(plan, anchor, flex=False, attend=given)(q, k, v, 3, call, {"scale": 0.3})
    assert len(given.calls) == len(record.calls)


def _largest_in_masked_path(tokens: int, masked) -> int:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, tokens, 16) for _ in range(3))
    return largest_allocation(lambda: masked(q, k, v, 16, (1, 3), 0, None))


@pytest.mark.parametrize("tokens", [(16 + 512, 16 + 2048)])
def test_the_masked_path_memory_grows_with_tokens_not_tokens_squared(tokens):
    """The largest tensor the path creates at 4x the tokens is at most 4x (the output, the gathered keys; each
    chunk's mask is bounded by MASK_ENTRIES): never the 16x of a tokens x tokens mask."""
    small, large = (_largest_in_masked_path(n, blockwise.masked_attention) for n in tokens)
    q_bytes = [2 * n * 16 * 4 for n in tokens]
    assert large <= 4 * small and large <= max(q_bytes[1], 4 * blockwise.MASK_ENTRIES)
    dense = [_largest_in_masked_path(n, _dense_masked) for n in tokens]  # the same gauge sees a tokens² mask
    assert dense[1] >= 15 * dense[0]


def _dense_masked(q, k, v, text, half, anchor, scale):
    """The kept entries as one tokens x tokens mask (what the masked path must never build)."""
    keep = _keep(q.shape[2], text, half, anchor)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep[None], scale=scale)


def test_flux_sized_chunks_stay_within_their_mask():
    """At FLUX.1's 4096² (65536 image tokens, 512 text, the shipped plan's half-width 31, anchor 32) a chunk takes
    several 64-token blocks and its mask stays within MASK_ENTRIES; the work is the kept share plus the chunks'
    band edges."""
    tokens, text = 512 + 256 ** 2, 512
    anchors, *keeps, chunks = blockwise.chunk_plan(tokens, text, 31, 32, torch.device("cpu"))
    assert anchors.numel() == 32 * 64 and len(chunks) < 1024
    for chunk in chunks:
        rows = chunk.rows[1] - chunk.rows[0]
        keys = text + chunk.span[1] - chunk.span[0] + anchors.numel() - (chunk.anchors[1] - chunk.anchors[0])
        assert rows * keys <= blockwise.MASK_ENTRIES
    work = text * tokens + sum((c.rows[1] - c.rows[0]) * (text + c.span[1] - c.span[0] + anchors.numel()
                                                          - (c.anchors[1] - c.anchors[0])) for c in chunks)
    assert 0.104 < work / tokens ** 2 < 0.13  # kept: 10.4 % (tests/test_hrdit_math.py)


@pytest.fixture
def fresh_log_once():
    kernel._say_why_not_flex.cache_clear()
    yield
    kernel._say_why_not_flex.cache_clear()


def test_cuda_without_triton_takes_the_blockwise_path_and_says_why_once(monkeypatch, caplog, fresh_log_once):
    """The decision alone (no GPU needed): CUDA with triton compiles FlexAttention; without it, the blockwise
    path, with one warning from the kernel's logger naming what to install; the CPU never takes FlexAttention."""
    cuda = torch.device("cuda")
    monkeypatch.setattr(kernel, "triton_available", lambda: True)
    assert kernel.flex_runs_here(cuda) and not kernel.flex_runs_here(torch.device("cpu"))
    monkeypatch.setattr(kernel, "triton_available", lambda: False)
    with caplog.at_level(logging.WARNING, logger=kernel.__name__):
        assert not any(kernel.flex_runs_here(cuda) for _ in range(3))
    lines = [r for r in caplog.records if r.name == kernel.__name__]
    assert len(lines) == 1 and "has_triton() is False" in lines[0].getMessage()
    assert "pip install triton" in lines[0].getMessage()


def test_triton_is_asked_as_inductor_asks(monkeypatch):
    """kernel.triton_available is torch.utils._triton.has_triton (what torch._inductor.scheduler checks before it
    compiles for a GPU), asked once."""
    from torch.utils import _triton

    kernel.triton_available.cache_clear()
    asked = []
    monkeypatch.setattr(_triton, "has_triton", lambda: asked.append(1) or False)
    try:
        assert kernel.triton_available() is False and kernel.triton_available() is False and asked == [1]
    finally:
        kernel.triton_available.cache_clear()


def test_no_eager_flex_on_cuda():
    """On a CUDA tensor FlexAttention runs compiled even when eager is asked for (tests ask so on the CPU): eager
    FlexAttention builds the whole score matrix."""
    from torch.nn.attention.flex_attention import flex_attention

    assert kernel.flex_function(torch.device("cuda"), compiled=False) is kernel._compiled_flex()
    assert kernel.flex_function(torch.device("cpu"), compiled=False) is flex_attention
    assert kernel.flex_function(torch.device("cpu"), compiled=True) is kernel._compiled_flex()
