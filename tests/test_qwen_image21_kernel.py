"""Qwen-Image 2.1's fused ``rms_rope`` (comfy-kitchen, 0.30 host and later) with the pack's tables in the model's
(B, N, H, D) layout: one (1, N, 1, pairs, 2, 2) table for the batch, or one row per sample where SEGA's temperatures
differ (comfy-kitchen's layout check, ``detect_rms_rope_bnhd``, takes a table batch of 1 or B). Against RMSNorm then
the host's eager rotation, row by row; on the CPU here, on CUDA in test_cuda.py (scripts/gpu-check.sh)."""

from __future__ import annotations

import pytest
import torch
from patching import _pack
from test_worker_threads_and_devices import _kitchen

pytestmark = pytest.mark.usefixtures("comfy_host")


def _tables(rows: int, n: int = 48) -> torch.Tensor:
    """(rows, N, 1, 64, 2, 2): fractional positions, scaled frequencies, per-row per-pair temperatures."""
    rope = _pack("rope")
    gen = torch.Generator().manual_seed(rows)
    positions = torch.arange(n, dtype=torch.float64) / 2 - 7.5  # half tokens, negative and positive
    freqs = rope.plain_frequencies(128, 10000.0)[None] * 0.6
    temperature = 1 + 0.2 * torch.rand(rows, 64, generator=gen, dtype=torch.float64)
    return rope.rotation_table(positions[None], freqs, temperature).unsqueeze(2)


def _eager(x, table, weight, eps):
    import comfy.ldm.flux.math as flux_math

    return flux_math._apply_rope1(torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps), table)


def _check(device: str, rows: int, dtype: torch.dtype, tolerance: dict) -> None:
    ck = _kitchen()
    if not hasattr(ck, "rms_rope"):
        pytest.skip("this host's comfy-kitchen has no rms_rope")
    table = _tables(rows)
    gen = torch.Generator().manual_seed(7)
    q, k = (torch.randn(2, table.shape[1], 2, 128, generator=gen).to(dtype) for _ in range(2))
    weight = (1 + 0.1 * torch.randn(128, generator=gen)).to(dtype)
    got_q, got_k = ck.rms_rope(q.to(device), k.to(device), table.to(device), weight.to(device), weight.to(device),
                               1e-6)
    for got, x in ((got_q, q), (got_k, k)):
        want = _eager(x.float(), table, weight.float(), 1e-6)
        torch.testing.assert_close(got.float().cpu(), want, **tolerance)


@pytest.mark.parametrize("rows", [1, 2])
def test_rms_rope_takes_one_table_or_one_per_sample_on_the_cpu(rows):
    _check("cpu", rows, torch.float32, dict(rtol=1e-5, atol=1e-5))
