"""Newer-host behaviours on the real host: model calls on worker threads (multi-GPU) and the host's float64 test."""

from __future__ import annotations

import logging
import threading

import pytest
import tiny_models
import torch
from capture import capture
from patching import _pack, dype
from test_sega_host import HW, expected_scales, sega, table_scales

pytestmark = pytest.mark.usefixtures("comfy_host")


def _on_worker_thread(executor, *args, **kwargs):
    """Run the rest of the model call on a fresh thread, as ComfyUI's MultiGPUThreadPool does: no ContextVars."""
    result: dict = {}

    def work() -> None:
        try:
            result["out"] = executor(*args, **kwargs)
        except BaseException as exc:  # re-raised on the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["out"]


def _threaded(model):
    """A clone whose APPLY_MODEL calls hop to a worker thread *outside* (before) the pack's wrapper."""
    import comfy.patcher_extension as ext

    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_worker_thread", _on_worker_thread)
    return clone


def test_calls_on_worker_threads_share_the_step_spectrum(monkeypatch):
    spectrum = _pack("nodes.rope_patch.spectrum")
    computed = []
    real = spectrum.latent_spectrum

    def counting(*args, **kwargs):
        computed.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(spectrum, "latent_spectrum", counting)
    model = sega(dype(_threaded(tiny_models.FAMILIES["flux"].build(0))))
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=3, cfg=2.0, negative=tiny_models.flux_cond(5, 2))
    assert len(calls) == 6  # cond and uncond in separate calls, each on its own worker thread
    assert len(computed) == 3  # still one spectrum per step
    assert all(name != threading.main_thread().name for name in computed)
    for call in calls:
        want = expected_scales(call.x, call.sigma, (8, 12), method="yarn")
        for got, expected in zip(table_scales(call.tables[0][1]), want, strict=True):
            torch.testing.assert_close(got, expected.to(torch.float32), rtol=2e-6, atol=0)


def test_worker_threads_report_to_the_run_once(caplog):
    model = sega(dype(_threaded(tiny_models.FAMILIES["flux"].build(0))))
    with caplog.at_level(logging.WARNING):
        out = tiny_models.sample(model, "flux", HW, steps=2, cfg=2.0, noise=torch.zeros(1, 16, *HW),
                                 negative=tiny_models.flux_cond(5, 2))
    assert torch.isfinite(out).all()
    assert len([r for r in caplog.records if "SEGA" in r.getMessage()]) == 1


def test_tables_are_built_where_the_host_has_float64(monkeypatch):
    import comfy.model_management as mm

    devices = _pack("nodes.rope_patch.devices")
    meta = torch.device("meta")
    assert devices.math_device(torch.device("cpu")) == torch.device("cpu")
    assert devices.math_device(meta) == meta
    # Whatever test the host uses (supports_fp64 on newer hosts, the MPS check on 0.3.75), the pack follows it.
    if hasattr(mm, "supports_fp64"):
        monkeypatch.setattr(mm, "supports_fp64", lambda device=None: torch.device(device).type != "meta")
    else:
        monkeypatch.setattr(mm, "is_device_mps", lambda device: torch.device(device).type == "meta")
    assert devices.math_device(meta) == torch.device("cpu")
    assert devices.math_device(torch.device("cpu")) == torch.device("cpu")


def _kitchen():
    import comfy.quant_ops

    ck = getattr(comfy.quant_ops, "ck", None)
    if ck is None or not hasattr(ck, "apply_rope"):
        pytest.skip("this host applies RoPE in plain torch (no comfy-kitchen dispatch in comfy.quant_ops)")
    return ck


def _scaled_per_sample_table(n_tokens: int = 40, pairs: int = 64) -> torch.Tensor:
    """A pack-style table: (2, 1, N, pairs, 2, 2) float32, each sample with its own per-pair temperatures."""
    rope = _pack("rope")
    gen = torch.Generator().manual_seed(3)
    positions = torch.randint(0, 200, (1, n_tokens), generator=gen).to(torch.float32)
    freqs = rope.plain_frequencies(2 * pairs, 10000.0)[None]
    temperature = 1.0 + 0.3 * torch.rand(2, pairs, generator=gen, dtype=torch.float64)
    return rope.rotation_table(positions, freqs, temperature).unsqueeze(1)


def test_comfy_kitchen_rope_reads_our_scaled_per_sample_tables():
    """Newer hosts apply RoPE through comfy-kitchen; its kernels must use all four matrix entries and per-batch rows.

    Compared with the host's own eager formula (``flux.math._apply_rope1``, what it runs in training) on the CPU
    (the CUDA and triton kernels: tests/test_cuda.py, run by scripts/gpu-check.sh).
    """
    ck = _kitchen()
    import comfy.ldm.flux.math as flux_math

    table = _scaled_per_sample_table()
    gen = torch.Generator().manual_seed(4)
    q, k = (torch.randn(2, 3, table.shape[2], 128, generator=gen) for _ in range(2))
    want_q, want_k = flux_math._apply_rope1(q, table), flux_math._apply_rope1(k, table)
    got_q, got_k = ck.apply_rope(q, k, table)
    torch.testing.assert_close(got_q.cpu(), want_q, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_k.cpu(), want_k, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(want_q[0], flux_math._apply_rope1(q, table[1:].expand_as(table))[0])  # rows differ
