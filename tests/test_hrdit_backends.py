"""An HRDiT stage clone (SPA and HAP on an attention clone) keeps the user's attention backend, on stand-ins of
ComfyUI's newest attention plumbing (tests/newest_attention.py: the Model Attention Backend node of PR #15479 at
691e827, set_model_optimized_attention at 08d0e51, wrap_attn's container / preferred_attention dispatch at
05080f6, FLUX's attention at 980c56c, comfy-kitchen's INT8 entry). Written from the upstream code and run on the
tiny FLUX of both hosts here; NOT run on the real thing (no host here has it; INT8 is a CUDA kernel).

What is checked: every attention the clone leaves alone reaches INT8's container path, and the image equals the run
without the clone; the attentions it computes itself (SPA's variants, HAP's masked chunks) reach it too; HAP attends
through a backend that takes a mask and says once per run when one does not; a checkpoint's own INT8 preference is
honoured; a backend set after the clone is chained under it."""

from __future__ import annotations

import logging

import newest_attention
import pytest
import tiny_models
import torch
from patching import _pack

pytestmark = pytest.mark.usefixtures("comfy_host")
GRID = (16, 20)  # 5 HAP blocks of 64 image tokens
INT8 = "comfy kitchen attention"


@pytest.fixture
def newest(comfy_host, monkeypatch):
    installed = newest_attention.install(monkeypatch)
    yield installed
    installed.close()


@pytest.fixture(scope="module")
def model(comfy_host):
    return tiny_models.build_flux()  # prefer() gives its blocks a preference for one test (undone after it)


_OWN: dict[tuple[bool, bool], torch.Tensor] = {}


def _plan(spa: bool, hap: bool):
    spa_module = _pack("nodes.rope_patch.spa")
    kernel = None
    if hap:  # a band of one block either side (alpha 128), no anchor: 2 layers x 2 heads
        scope = _pack("nodes.hap.scope_plan").ScopePlan(((128.0,) * 2,) * 2, ((0.0,) * 2,) * 2)
        kernel = _pack("nodes.hap.kernel").hap_kernel(scope, 0, flex=False)
    return spa_module.AttentionPlan(spa=spa_module.SpaSettings(10) if spa else None, spa_steps=(0, 1),
                                    kernel=kernel)


def _clone(model, spa: bool, hap: bool):
    adapter = _pack("nodes.families").detect_family(model.model)
    return _pack("nodes.rope_patch.attention_clone").attention_clone(model, adapter, _plan(spa, hap))


def _sample(model):
    """One step (SPA's, spa_steps (0, 1)), cfg 1: one model call, two attentions (the double and the single block)."""
    return tiny_models.sample(model, "flux", tokens=GRID, steps=1, seed=0)


ATTENTIONS = 2
# HAP's blockwise pieces of one attention (nodes/hap/blockwise.py): the text rows (no mask), then chunks of
# 2·half + 1 = 3 query blocks over the grid's 5 (each with a band mask)
HAP_PIECES = 3


def _variants() -> int:
    return _pack("rope.spa").variant_count(*GRID, 10)


def test_the_stand_ins_dispatch_as_upstream(newest, model):
    """The stand-ins themselves: the backend node's INT8 takes every attention on its container path; a checkpoint
    preference does the same without the node; the node's PyTorch choice wins over that preference."""
    plain = _sample(model)
    assert _sample(newest.backend_node(model, INT8)).equal(plain)  # SDPA either way: the same numbers
    assert [c["path"] for c in newest.calls] == ["containers"] * ATTENTIONS
    newest.calls.clear()
    newest.prefer(model, newest.int8)
    _sample(model)
    assert [c["path"] for c in newest.calls] == ["containers"] * ATTENTIONS
    newest.calls.clear()
    _sample(newest.backend_node(model, "pytorch attention"))
    assert newest.calls == []


@pytest.mark.parametrize("how", ["backend node", "checkpoint"])
def test_a_clone_with_nothing_to_do_reaches_int8_as_before(newest, model, how):
    """SPA and HAP off: every attention reaches INT8's container path, and the image is bit-identical."""
    base = newest.backend_node(model, INT8) if how == "backend node" else model
    if how == "checkpoint":
        newest.prefer(model, newest.int8)
    without = _sample(base)
    before = list(newest.calls)
    newest.calls.clear()
    assert _sample(_clone(base, spa=False, hap=False)).equal(without)
    assert newest.calls == before and {c["path"] for c in before} == {"containers"}


@pytest.mark.parametrize("how", ["backend node", "checkpoint"])
@pytest.mark.parametrize("spa,hap", [(True, False), (False, True), (True, True)], ids=["spa", "hap", "spa+hap"])
def test_spa_and_hap_attend_through_int8(newest, model, how, spa, hap):
    """Each attention SPA and HAP compute (SPA's variants, HAP's masked attention) goes through INT8's
    container path, HAP's with its boolean keep mask; the image is the one of the pack's own SDPA (no backend)."""
    if (spa, hap) not in _OWN:
        _OWN[spa, hap] = _sample(_clone(model, spa, hap))
    assert newest.calls == []
    base = newest.backend_node(model, INT8) if how == "backend node" else model
    if how == "checkpoint":
        newest.prefer(model, newest.int8)
    got = _sample(_clone(base, spa, hap))
    torch.testing.assert_close(got, _OWN[spa, hap], rtol=1e-5, atol=1e-6)
    assert len(newest.calls) == (_variants() if spa else 1) * ATTENTIONS * (HAP_PIECES if hap else 1)
    assert {c["path"] for c in newest.calls} == {"containers"}
    assert {c["mask"] for c in newest.calls} == ({None, torch.bool} if hap else {None})


@pytest.mark.parametrize("name", ["attention_split", "attention_sub_quad", "attention_basic"])
def test_hap_gives_an_additive_mask_to_the_backends_that_add_theirs(newest, model, monkeypatch, name):
    """ComfyUI's split, sub-quadratic and basic attention add a mask to the scores: HAP hands them its keep mask as
    0 / a large negative in q's dtype, and the image is the one of HAP's own kernel."""
    import comfy.ldm.modules.attention as host

    masks, raw = [], getattr(host, name).__wrapped__

    def spy(q, k, v, heads, mask=None, **kwargs):
        masks.append(None if mask is None else mask.dtype)
        return raw(q, k, v, heads, mask=mask, **kwargs)

    monkeypatch.setattr(host, name, backend := newest.wrap(spy))
    base = model.clone()
    base.set_model_optimized_attention(backend)
    got = _sample(_clone(base, spa=False, hap=True))
    assert masks == [None, torch.float32, torch.float32] * ATTENTIONS  # per attention: text rows, two chunks
    if (False, True) not in _OWN:
        _OWN[False, True] = _sample(_clone(model, False, True))
    torch.testing.assert_close(got, _OWN[False, True], rtol=1e-5, atol=1e-5)


def test_hap_on_a_backend_without_a_mask_runs_its_own_kernel_and_says_so_once(newest, model, caplog):
    """A backend that takes no mask (here: an unknown function set with the backend node's setter) is not called for
    HAP's attentions; the run says so in one line."""
    seen = []

    def unknown(q, k, v, heads, **kwargs):
        seen.append(kwargs.get("mask"))
        return newest_attention._sdpa(q.take(), k.take(), v.take(), heads, None, True, False, None)

    base = model.clone()
    base.set_model_optimized_attention(unknown)
    with caplog.at_level(logging.INFO):
        got = _sample(_clone(base, spa=False, hap=True))
    lines = [r.getMessage() for r in caplog.records if "HAP runs its own attention kernel" in r.getMessage()]
    assert seen == [] and len(lines) == 1 and "unknown" in lines[0] and "takes no mask" in lines[0]
    torch.testing.assert_close(got, _sample(_clone(model, spa=False, hap=True)), rtol=1e-5, atol=1e-6)


def test_a_backend_set_after_the_clone_is_chained_under_it(newest, model, caplog):
    """Whoever writes last wins the override key: the backend node on the clone replaces ours. The clone's wrapper
    puts ours back on top for every call, the backend under it, and says so once: the same image as the backend set
    before the clone, INT8's container path for every attention."""
    before = _sample(_clone(newest.backend_node(model, INT8), spa=True, hap=True))
    calls = list(newest.calls)
    newest.calls.clear()
    with caplog.at_level(logging.INFO):
        after = _sample(newest.backend_node(_clone(model, spa=True, hap=True), INT8))
    assert after.equal(before) and newest.calls == calls
    lines = [r.getMessage() for r in caplog.records if "replaced after HRDiT's clone" in r.getMessage()]
    assert len(lines) == 1 and "attention_comfy_kitchen_int8" in lines[0]


def test_a_node_chaining_onto_the_clone_is_chained_under_it_once(newest, model):
    """A node that chains its override onto the clone's (as ComfyUI's Block Sparse Attention does, 01dafad:
    declined calls go to ``previous(func, ...)``) ends up under ours, and ours under it passes through: SPA is
    applied once, the image is the clone's own."""
    clone = _clone(newest.backend_node(model, INT8), spa=True, hap=False)
    expected = _sample(clone)
    declined = []
    options = (chained := clone.clone()).model_options["transformer_options"]
    previous = options["optimized_attention_override"]

    def sparse(func, q, k, v, heads, **kwargs):
        declined.append(kwargs["transformer_options"]["block_type"])
        return previous(func, q, k, v, heads, **kwargs)

    options["optimized_attention_override"] = sparse
    torch.testing.assert_close(_sample(chained), expected, rtol=0, atol=0)
    assert len(declined) == _variants() * ATTENTIONS  # every attention ours computes, each once


def test_a_block_preferring_two_functions_gets_the_hosts_attention(newest, model, monkeypatch, caplog):
    """Which of a block's ComfyAttention modules a FLUX block passes could not be read upstream: a block whose modules
    set different functions is said once and left to the host's attention; the other blocks keep their INT8."""
    newest.prefer(model, newest.int8)
    block = model.model.diffusion_model.double_blocks[0]
    monkeypatch.setattr(block, "other_attention", newest_attention.ComfyAttention(lambda *a, **k: None),
                        raising=False)
    with caplog.at_level(logging.INFO):
        _sample(_clone(model, spa=True, hap=False))
    assert {c["block"][0] for c in newest.calls} == {"single"}
    assert len([r for r in caplog.records if "sets 2 attention functions in double block 0" in r.getMessage()]) == 1


def test_a_block_without_a_preference_gets_the_hosts_attention(newest, model):
    """A checkpoint that sets INT8 in its single block only: the double block's attention stays the host's."""
    newest.prefer(model, newest.int8)
    newest.monkeypatch.setattr(model.model.diffusion_model.double_blocks[0].comfy_attention, "function", None)
    _sample(_clone(model, spa=False, hap=False))
    assert [c["block"] for c in newest.calls] == [("single", 0)]
