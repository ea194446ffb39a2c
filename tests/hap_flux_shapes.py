"""HAP's kernel at FLUX.1's attention shape (24 heads, head dim 128, 512 text tokens, 16 px a token), with and
without triton, its peak memory measured and bounded: on CUDA at 2048² and 4096² in bf16 (tests/test_cuda.py, run
by scripts/gpu-check.sh) and, as their CPU twin in every suite, the same code at 256² in float32 with a narrower
scope, so that HAP prunes there too (the shipped plan's 31 blocks either side cover a 256² image).

Without triton the kernel must take the blockwise path (``triton_available`` is monkeypatched to False, as a
Windows portable ComfyUI has it); with triton, on CUDA, the compiled FlexAttention. Correctness is checked on a
sample of query rows (text, the first, a middle and the last image rows) against softmax attention over the keys
the official ``mask_mod`` keeps (tests/hrdit_reference.py), in float32."""

from __future__ import annotations

import hrdit_reference as ref
import pytest
import torch
from patching import _pack

TEXT = 512
HEADS, DIM = 24, 128
ANCHOR = 32  # the official run's global anchor (zylwithxy/HRDiT e4aa8c6 inference.py:31)


class _Call:
    """What the kernel reads of nodes/rope_patch/spa.py's AttentionCall: the grid and the layer."""

    def __init__(self, grid: tuple[int, int]) -> None:
        self.grid = grid

    def layer(self, options: dict) -> int:
        return 0


def _peak_bytes(run, device: torch.device) -> tuple[object, int]:
    """``run()``'s result and its peak bytes above those allocated before: the CUDA allocator's high-water mark, or
    on the CPU the bench's allocation record (nodes/bench/peak_memory.py)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        out = run()
        torch.cuda.synchronize(device)
        return out, torch.cuda.max_memory_allocated(device) - before
    out, peak, _ = _pack("nodes.bench.peak_memory").record_bytes(run, device)
    return out, peak


def _expected_rows(q, k, v, rows: torch.Tensor, half: int) -> torch.Tensor:
    keep = ref.keep_rows(rows, q.shape[2], half, ANCHOR, TEXT)
    out = []
    for h in range(0, q.shape[1], 8):  # 8 heads at a time: the (rows x tokens) scores stay small
        scores = q[:, h:h + 8, rows].float() @ k[:, h:h + 8].float().transpose(-1, -2) * DIM ** -0.5
        out.append(scores.masked_fill(~keep, float("-inf")).softmax(-1) @ v[:, h:h + 8].float())
    return torch.cat(out, dim=1)


def check_hap_at_flux_shape(device: str, side: int, dtype: torch.dtype, alpha: float, triton: bool,
                            monkeypatch) -> None:
    kernel = _pack("nodes.hap.kernel")
    scope_plan = _pack("nodes.hap.scope_plan")
    if device == "cuda" and triton and not kernel.triton_available():
        pytest.skip("torch finds no triton on this machine (torch.utils._triton.has_triton() is False)")
    monkeypatch.setattr(kernel, "triton_available", lambda: triton)
    _pack("spectral.shape_cache").release()  # the block mask's or the chunks' build is measured too
    grid = (side // 16, side // 16)
    tokens = TEXT + grid[0] * grid[1]
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(1, HEADS, tokens, DIM, generator=gen, device=device).to(dtype) for _ in range(3))
    plan = scope_plan.ScopePlan(((alpha,),), ((0.0,),))
    (half,) = set(plan.half_widths(0, HEADS, tokens))
    flex = kernel.flex_runs_here(q.device)
    assert flex == (device == "cuda" and triton)
    run = kernel.hap_kernel(plan, ANCHOR)
    out, peak = _peak_bytes(lambda: run(q, k, v, HEADS, _Call(grid), {"skip_output_reshape": True}), q.device)
    # what the path needs: the output, the gathered keys and values of a chunk or the block mask, the kernel's
    # own buffers; a tokens x tokens anything (one head's bool mask: 4 GiB at 4096²) is far over it
    assert peak <= 3 * q.nbytes + 64 * 2**20, (peak, q.nbytes)
    image = torch.arange(TEXT, tokens, device=device)
    rows = torch.cat([torch.arange(0, 64, device=device), image[:64], image[image.numel() // 2:][:64], image[-64:]])
    expected = _expected_rows(q, k, v, rows, half)
    error = float((out[:, :, rows].float() - expected).abs().max() / expected.abs().max())
    assert error < (2e-2 if dtype == torch.bfloat16 else 2e-5), error
    dense = _expected_rows(q, k, v, rows, tokens)  # a half-width over the whole image: nothing pruned
    assert float((dense - expected).abs().max() / expected.abs().max()) > 0.2  # HAP prunes at this shape
