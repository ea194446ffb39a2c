"""rope/tables.py window path: evaluating cos/sin once per integer window position and gathering is bit-identical to
evaluating every token, and reports ids that are not in the window (pure math, no ComfyUI)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="module")
def rope():
    import host

    return host.pack_submodule("rope")


def _flux_like_ids(batch: int, rows: int, cols: int, text: int) -> torch.Tensor:
    img = torch.zeros(rows, cols, 3)
    img[..., 1] = torch.arange(rows)[:, None]
    img[..., 2] = torch.arange(cols)[None]
    ids = torch.cat([torch.zeros(text, 3), img.reshape(-1, 3)])
    return ids[None].expand(batch, -1, -1).clone()


def _direct(rope, ids, schedules):
    parts = [rope.rotation_table(ids[..., c], f, m) for c, (f, m) in enumerate(schedules)]
    batch = max(p.shape[0] for p in parts)
    return torch.cat([p.expand(batch, *p.shape[1:]) for p in parts], dim=-3)


@pytest.mark.parametrize(("batch", "per_sample", "centred"), [(1, False, False), (2, False, False), (2, True, True)])
def test_window_gather_is_bit_identical(rope, batch, per_sample, centred):
    rows, cols, text = 24, 40, 13
    ids = _flux_like_ids(batch, rows, cols, text)
    if centred:  # Qwen-style: centred image, text on the diagonal after it
        ids[:, text:, 1:] -= torch.tensor([rows // 2, cols // 2], dtype=ids.dtype)
        ids[:, :text, 1:] = (max(rows, cols) // 2 + torch.arange(text, dtype=ids.dtype))[:, None]
    gen = torch.Generator().manual_seed(0)
    rows_f = batch if per_sample else 1
    schedules = [(rope.plain_frequencies(16, 1e4)[None], None)]
    for _ in range(2):
        freqs = rope.plain_frequencies(56, 1e4)[None] / (1 + torch.rand(rows_f, 1, generator=gen, dtype=torch.float64))
        schedules.append((freqs, 0.5 + torch.rand(rows_f, 28, generator=gen, dtype=torch.float64)))
    radius = rope.window_radius(ids.shape[1], (rows, cols))
    window = rope.window_positions(radius)
    parts, missed = [], []
    for column, (freqs, temperature) in enumerate(schedules):
        index, miss = rope.window_index(ids[..., column], radius)
        parts.append((rope.rotation_table(window, freqs, temperature), index))
        missed.append(miss)
    fast = rope.gather_tables(parts)
    assert fast.is_contiguous() and fast.dtype == torch.float32
    assert torch.equal(fast, _direct(rope, ids, schedules))
    assert not torch.stack(missed).any()


@pytest.mark.parametrize("bad", [0.5, float("nan"), 10_000.0])
def test_ids_outside_the_window_are_flagged_and_index_safely(rope, bad):
    ids = torch.arange(10, dtype=torch.float32)[None]
    ids[0, 3] = bad
    index, missed = rope.window_index(ids, 12)
    assert bool(missed)
    assert int(index.min()) >= 0 and int(index.max()) <= 24


def test_gather_is_differentiable(rope):
    """A window table that requires grad (SEGA's temperatures of a latent that requires grad) gathers through
    autograd: the same bits forward, and the per-token formula's gradient up to summation order (the gather sums a
    window position's tokens before the cos/sin, the per-token formula after)."""
    rows, cols, text = 12, 20, 5
    ids = _flux_like_ids(1, rows, cols, text)
    gen = torch.Generator().manual_seed(1)
    temperature = (0.5 + torch.rand(1, 28, generator=gen, dtype=torch.float64)).requires_grad_(True)
    schedules = [(rope.plain_frequencies(16, 1e4)[None], None), (rope.plain_frequencies(56, 1e4)[None], None),
                 (rope.plain_frequencies(56, 1e4)[None], temperature)]
    radius = rope.window_radius(ids.shape[1], (rows, cols))
    window = rope.window_positions(radius)
    parts = [(rope.rotation_table(window, f, m), rope.window_index(ids[..., c], radius)[0])
             for c, (f, m) in enumerate(schedules)]
    weights = torch.randn(1, ids.shape[1], 64, 2, 2, generator=gen)
    fast = rope.gather_tables(parts)
    (fast_grad,) = torch.autograd.grad((fast * weights).sum(), temperature)
    direct = _direct(rope, ids, schedules)
    (direct_grad,) = torch.autograd.grad((direct * weights).sum(), temperature)
    assert fast.requires_grad and torch.equal(fast, direct)
    torch.testing.assert_close(fast_grad, direct_grad, rtol=1e-5, atol=1e-6)
    with torch.no_grad():  # the eager out= path where no gradient is recorded: the same bits
        assert not rope.gather_tables(parts).requires_grad and torch.equal(rope.gather_tables(parts), direct)
