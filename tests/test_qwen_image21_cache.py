"""Qwen-Image 2.1's text/reference key cache as upstream runs it (tests/qwen_image21_cache.py: slots in LRU order,
eviction, the memory budget, int8 / int4 storage, and the slot lookup of 2.1's first releases), and the pack on it:
switched off where the pack's table changes per step (exact whatever the storage), read where it does not, a pass
with two slots (cond and uncond) equal to the cache off, and the cascades safe with the released lookup, which
raises once a run reads a slot behind an older one. Not run on the real thing (ComfyUI 0.37+ only)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import hiflow_cascade_reference as cref
import pytest
import qwen_image21_cache as qc
import qwen_image21_standin as standin
import tiny_models
import torch
from patching import _pack, dype
from test_hiflow_host import _settings
from test_hiflow_newest import qwen21_vae
from test_qwen_image21_host import edit_cond, sample, with_cache_log

pytestmark = pytest.mark.usefixtures("comfy_host")
GRID = (6, 6)
NEGATIVE = tiny_models.qwen_cond(5, 2)  # another length: cond and uncond run apart, two slots


def _run(model, *, steps=3, cfg=2.0, grid=GRID, positive=None, negative=NEGATIVE, cache=None, memory=None):
    """(latent, log of (fills, hits) per call, the cache as the last call left it: a SimpleNamespace of its slot
    count, evictions, dtype and bytes held; the run frees the cache itself when it ends)."""
    clone, log = with_cache_log(model)
    if cache is not None:
        clone.model_options["transformer_options"][standin.CACHE_OPTION] = cache
    diffusion_model, last = clone.model.diffusion_model, []
    diffusion_model.cache_memory = memory or qc.Memory()

    def snapshot(executor, *args, **kwargs):
        out = executor(*args, **kwargs)
        live = executor.class_obj.diffusion_model.prefix_cache
        last[:] = [] if live is None else [SimpleNamespace(slots=len(live.slots), evictions=live.evictions,
                                                           dtype=live.dtype, held=live.memory.held)]
        return out

    clone.add_wrapper_with_key(ext().WrappersMP.APPLY_MODEL, "tests_cache_snapshot", snapshot)
    out = sample(clone, grid, steps=steps, cfg=cfg, positive=positive or edit_cond(), negative=negative)
    return out, log, (last or [None])[0]


def ext():
    import comfy.patcher_extension

    return comfy.patcher_extension


def test_slots_keep_lru_order_and_the_released_lookup_raises_behind_the_oldest():
    older, newer = torch.zeros(1, 3), torch.ones(1, 3)
    for cls in (qc.PoseBranchCache, qc.ReleasedPoseBranchCache):
        cache = cls()
        cache.select(older)
        cache.select(newer)
        assert cache.select(older, create=False) is True  # the oldest slot: found, moved to the end
        assert [torch.equal(s["key"], newer) for s in cache.slots] == [True, False]
    newest, released = qc.PoseBranchCache(), qc.ReleasedPoseBranchCache()
    for cache in (newest, released):
        cache.select(older)
        cache.select(newer)
    assert newest.select(newer, create=False) is True
    with pytest.raises(RuntimeError, match="ambiguous"):  # list.remove compares the older slot's dict of tensors
        released.select(newer, create=False)
    holds = _pack("nodes.rope_patch.prefix_cache").holds_two_slots
    assert holds(qc.PoseBranchCache) and not holds(qc.ReleasedPoseBranchCache)


@pytest.mark.parametrize(("dtype", "most"), [("default", 0.0), ("int8", 0.02), ("int4", 0.3)])
def test_int8_and_int4_storage_round_trip_with_their_error(dtype, most):
    """Keys and values stacked (B, 2, P, H, D) as the model stores them; comfy-kitchen's layouts quantize them."""
    block = torch.randn(1, 2, 9, 2, 128, generator=torch.Generator().manual_seed(0))
    cache = qc.PoseBranchCache(dtype=dtype)
    cache.select(torch.zeros(1, 3))
    cache.put(0, block)
    back = cache.take(0, torch.device("cpu"), torch.float32, 2)
    error = ((back[:1] - block).norm() / block.norm()).item()
    assert back.shape == (2, *block.shape[1:]) and error <= most and (error > 0) == (dtype != "default")
    assert cache.memory.held < block.numel() * block.element_size() or dtype == "default"


def test_a_pass_with_two_slots_reads_both_and_equals_the_cache_off():
    model = standin.build(0)
    off, off_log, _ = _run(model, cache={"device": "off"})
    on, log, cache = _run(model)
    assert off_log == [None] * 6 and cache.slots == 2  # cond and uncond each a slot
    assert log[-1] == (2, 4) and cache.evictions == 0  # each filled once, read at the two later steps
    torch.testing.assert_close(on, off, rtol=1e-5, atol=1e-5)


def test_a_tight_budget_evicts_the_other_slot_or_recomputes_and_gives_the_same_latent():
    """The slot's gate counts what the patcher could offload, the eviction what is free now: with room for less than
    1.5 slots and offloadable weights, each slot evicts the other (every call fills); without them the second slot
    is refused and recomputed each step ("rather than evict the other cond's slot"). The short prompt's slot comes
    first, the edit's (text and two references) second."""
    model = standin.build(0)
    prompts = dict(positive=NEGATIVE, negative=edit_cond())
    off, _, _ = _run(model, cache={"device": "off"}, **prompts)
    short = _run(model, cfg=1.0, **prompts)[2].held
    both = _run(model, **prompts)[2].held
    assert both > 2 * short  # the edit's slot is the larger
    thrash, log, cache = _run(model, memory=qc.Memory(budget=short, offloadable=10 * both), **prompts)
    assert log[-1] == (6, 0) and cache.evictions == 5 and cache.slots == 1
    refused, log, cache = _run(model, memory=qc.Memory(budget=int(2.5 * short)), **prompts)
    assert log[-1] == (1, 2) and cache.evictions == 0 and cache.slots == 1  # the first cached, the edit recomputed
    for latent in (thrash, refused):
        torch.testing.assert_close(latent, off, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_quantized_storage_is_off_where_the_table_changes_and_read_where_it_does_not(dtype):
    model = standin.build(0)
    off, _, _ = _run(dype(model, dynamic=False), cache={"device": "off"})
    per_step, log, _ = _run(dype(model), cache={"device": "cpu", "dtype": dtype})
    assert log == [None] * 6  # DyPE's table changes per step: the stored keys are never read
    assert torch.equal(per_step, _run(dype(model), cache={"device": "off"})[0])
    static, log, cache = _run(dype(model, dynamic=False), cache={"device": "cpu", "dtype": dtype})
    assert log[-1] == (2, 4) and cache.dtype == dtype  # the same table each step: upstream's cache, as it runs
    error = ((static - off).norm() / off.norm()).item()
    assert 0 < error < (0.005 if dtype == "int8" else 0.05)  # the storage's own error (0.04 % / 0.6 % measured)


@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_at_the_trained_size_the_quantized_cache_runs_bit_identical(dtype):
    model = standin.build(0)
    settings = {"device": "gpu", "dtype": dtype}
    stock, log, _ = _run(model, grid=(4, 4), cache=settings)
    patched, patched_log, _ = _run(dype(model), grid=(4, 4), cache=settings)
    assert torch.equal(stock, patched) and log == patched_log and log[-1] == (2, 4)


def _ranged(*entries):
    """A positive prompt of two conds that take turns (ConditioningSetTimestepRange): a third slot mid-run."""
    return [[c[0][0], {**c[0][1], "start_percent": a, "end_percent": b}] for c, (a, b) in entries]


def test_the_cascades_run_where_the_released_lookup_would_raise(monkeypatch, caplog):
    """Two conds taking turns: at the second one's first step the uncond's slot sits behind an older one, and the
    released lookup raises in ComfyUI's own sampler. The cascade turns the cache off for its passes there, and gives
    what the newest lookup gives; with the newest lookup it leaves the MODEL as it is."""
    positive = _ranged((edit_cond(1), (0.0, 0.5)), (edit_cond(4), (0.5, 1.0)))
    model = standin.build(0)
    monkeypatch.setattr(standin, "PoseBranchCache", qc.ReleasedPoseBranchCache)
    with pytest.raises(RuntimeError, match="ambiguous|must match"):  # dicts of tensors compared: shapes too
        _run(model, steps=4, positive=positive)
    hiflow, room = _pack("nodes.cascade"), _pack("nodes.rope_patch.prefix_cache")

    def cascade():
        clone, log = with_cache_log(model)
        settings = _settings(cref.Case(stage_steps=(4, 2), guidance=(0.0, 0.0), cfg=2.0))
        out = hiflow.run_cascade(clone, positive, NEGATIVE, qwen21_vae(), {"samples": torch.zeros(1, 64, 2, 2)}, 3,
                                 settings)
        return out.latent["samples"], log

    with caplog.at_level(logging.WARNING):
        safe, log = cascade()
    assert log and all(entry is None for entry in log) and "raises once a run reads one of its slots" in caplog.text
    monkeypatch.setattr(standin, "PoseBranchCache", qc.PoseBranchCache)
    cached, log = cascade()
    assert sum(hits for _, hits in log) > 0
    torch.testing.assert_close(safe, cached, rtol=1e-4, atol=1e-5)
    adapter = _pack("nodes.families").QWEN_IMAGE21
    assert room.cascade_pass_model(model, adapter, "HiFlow Cascade") is model
