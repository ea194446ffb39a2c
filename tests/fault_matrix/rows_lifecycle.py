"""Fault matrix rows: samplers off the schedule, half precision, repeats, interrupts, offloading, threads and unloads mid-run."""

from __future__ import annotations

import threading

import pytest
import tiny_configs
import tiny_models
import torch
from capture import capture
from patching import _pack

from .lab import (
    Lab,
    assert_tables_follow_the_schedule,
    dype,
    row,
    sample_with,
)


@row("multistep / second-order samplers evaluating sigmas off the schedule (dpm_2, dpmpp_2s_ancestral)",
     "every model call uses its own sigma, including the midpoints")
def row_off_schedule_sigmas(lab: Lab) -> None:
    import comfy.samplers

    sigmas = comfy.samplers.calculate_sigmas(lab.model.get_model_object("model_sampling"), "simple", 2)
    for sampler in ("dpm_2", "dpmpp_2s_ancestral"):
        with capture(dype(lab.model)) as (clone, calls):
            sample_with(clone, "flux", steps=2, cfg=1.0, sampler=sampler)
        seen = {float(c.sigma[0]) for c in calls}
        assert seen - set(sigmas.tolist()), f"{sampler} evaluated only on-schedule sigmas"
        assert_tables_follow_the_schedule(calls)


@row("bf16 and fp16 models", "finite; the table stays float32 (the model casts it, as stock)")
def row_half_precision(lab: Lab) -> None:
    for dtype in (torch.bfloat16, torch.float16):
        import comfy.model_patcher
        import comfy.supported_models

        config = comfy.supported_models.Flux(tiny_models.host_unet_config(tiny_configs.FLUX_CONFIG))
        config.set_inference_dtype(dtype, None)
        base = config.get_model({})
        with torch.no_grad():
            for p in base.parameters():
                p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(1)).to(p.dtype) * 0.05)
        model = comfy.model_patcher.ModelPatcher(base, torch.device("cpu"), torch.device("cpu"))
        with capture(dype(model)) as (clone, calls):
            out = lab.sample(clone, steps=1)
        assert torch.isfinite(out).all()
        assert all(pe.dtype == torch.float32 for c in calls for _, pe in c.tables)


@row("the same patched model sampled twice, and again after unloading all models", "bit-identical each time")
def row_repeat_and_unload(lab: Lab) -> None:
    import comfy.model_management

    patched = dype(lab.model)
    first = lab.sample(patched)
    assert torch.equal(first, lab.sample(patched))
    comfy.model_management.unload_all_models()
    assert torch.equal(first, lab.sample(patched))


@row("sampling interrupted (Cancel) after the first step", "the interrupt propagates; the next run is unaffected")
def row_interrupt(lab: Lab) -> None:
    import comfy.model_management

    patched = dype(lab.model)
    clean = lab.sample(patched)

    def cancel(step, *_):
        comfy.model_management.interrupt_current_processing(True)
        comfy.model_management.throw_exception_if_processing_interrupted()

    with pytest.raises(comfy.model_management.InterruptProcessingException):
        sample_with(patched, "flux", callback=cancel)
    comfy.model_management.interrupt_current_processing(False)
    assert torch.equal(lab.sample(patched), clean)


@row("lowvram / offload: the patched model is partially unloaded (weights to the offload device, cast per layer) "
     "during sampling, then fully loaded again",
     "object patch and schedule survive; result equal to an undisturbed run")
def row_lowvram_offload(lab: Lab) -> None:
    patched = dype(lab.model)
    clean = sample_with(patched, "flux")
    moves = []

    def offload(step, *_):
        if step == 0:
            moves.append(patched.partially_unload(patched.offload_device, memory_to_free=1 << 40))
            assert isinstance(patched.model.diffusion_model.pe_embedder, _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder)

    out = sample_with(patched, "flux", callback=offload)
    assert moves and moves[0] > 0, "nothing was offloaded"
    torch.testing.assert_close(out, clean, rtol=1e-5, atol=1e-5)
    patched.partially_load(patched.load_device, extra_memory=1 << 40)
    assert torch.equal(sample_with(patched, "flux"), clean)


def _second_sampler_thread(lab: Lab, b_model, match: str) -> None:
    """Sample DyPE (yarn) on this thread; at its first step another thread starts sampling ``b_model`` (a clone of
    the same loaded model) and holds its first model call until this run has failed with ``match``."""
    import comfy.patcher_extension as ext

    errors_module = _pack("nodes.rope_patch.errors")
    a_model = dype(lab.model)
    b_model = b_model.clone()
    b_inside, a_failed = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold_b_inside(executor, *args, **kwargs):  # B's first model call waits until A has hit the swap
        b_inside.set()
        a_failed.wait(60)
        return executor(*args, **kwargs)

    b_model.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_hold", hold_b_inside)

    def run_b() -> None:
        try:
            lab.sample(b_model, steps=1, cfg=1.0)
        except BaseException as error:  # noqa: BLE001  (reported by the assertion below)
            errors.append(error)

    def start_b(step, *_):
        if step == 0:
            threading.Thread(target=run_b, name="second sampler").start()
            assert b_inside.wait(60)

    thread_count = threading.active_count()
    try:
        with pytest.raises(errors_module.ConcurrentSamplingError, match=match):
            sample_with(a_model, "flux", steps=2, callback=start_b)
    finally:
        a_failed.set()
    for thread in threading.enumerate():
        if thread.name == "second sampler":
            thread.join(60)
    assert threading.active_count() <= thread_count and not errors, errors


@row("a second sampler thread samples another clone of the same loaded model (DyPE/SEGA too) while this one runs",
     "ConcurrentSamplingError naming the true cause (ComfyUI cannot sample one loaded model from two threads)")
def row_concurrent_threads(lab: Lab) -> None:
    _second_sampler_thread(lab, dype(lab.model, method="ntk"),
                           "switched to another clone's DyPE/SEGA embedder.*two samplers run one loaded model")


@row("a second sampler thread samples a clone of the same loaded model *without* DyPE/SEGA while this one runs",
     "ConcurrentSamplingError: another clone without DyPE/SEGA replaced this one on the model (two threads)")
def row_concurrent_stock_clone(lab: Lab) -> None:
    _second_sampler_thread(lab, lab.model, "another clone of this model without DyPE/SEGA.*two samplers run one")


@row("the model is fully unloaded between two steps (unload_all_models from a sampler callback)",
     "the clone is loaded again before the next model call (nodes/rope_patch/reload.py): the result equals an "
     "undisturbed run's, bit for bit; the next run is unaffected")
def row_unloaded_mid_run(lab: Lab) -> None:
    import comfy.model_management

    patched = dype(lab.model)
    clean = sample_with(patched, "flux")
    unloaded = []

    def unload(step, *_):
        if step == 0:
            comfy.model_management.unload_all_models()
            unloaded.append(type(patched.model.diffusion_model.pe_embedder).__name__)

    assert torch.equal(sample_with(patched, "flux", callback=unload), clean)
    assert unloaded == ["EmbedND"]  # the unload did take the patch off
    assert torch.equal(sample_with(patched, "flux"), clean)


@row("the clone's object patches are taken off while it stays loaded (unpatch_model from a sampler callback)",
     "ModelUnloadedError saying its patches were removed while it stayed loaded (ComfyUI still lists it loaded, so "
     "nothing loads it again); never silently stock RoPE")
def row_unpatched_mid_run(lab: Lab) -> None:
    errors = _pack("nodes.rope_patch.errors")
    patched = dype(lab.model)

    def unpatch(step, *_):
        if step == 0:
            patched.unpatch_model(unpatch_weights=False)

    with pytest.raises(errors.ModelUnloadedError, match="removed while it stayed loaded"):
        sample_with(patched, "flux", callback=unpatch)


@row("the shared model is re-patched for another clone in the middle of a model call",
     "ConcurrentSamplingError from the embedder itself (never silently stock RoPE)")
def row_swap_inside_a_call(lab: Lab) -> None:
    import comfy.patcher_extension as ext

    errors = _pack("nodes.rope_patch.errors")
    a_model, b_model = dype(lab.model), dype(lab.model, method="ntk")
    a_embedder = a_model.object_patches["diffusion_model.pe_embedder"]
    b_embedder = b_model.object_patches["diffusion_model.pe_embedder"]

    def swap_then_call(executor, *args, **kwargs):  # runs inside our apply_model wrapper's call scope
        lab.model.model.diffusion_model.pe_embedder = b_embedder
        try:
            return executor(*args, **kwargs)
        finally:
            lab.model.model.diffusion_model.pe_embedder = a_embedder

    clone = a_model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_swap", swap_then_call)
    with pytest.raises(errors.ConcurrentSamplingError, match="another clone's DyPE/SEGA embedder"):
        lab.sample(clone, steps=1)
