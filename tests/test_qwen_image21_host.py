"""Qwen-Image 2.1 on its stand-in (tests/qwen_image21_standin.py, written from ComfyUI 0.37+'s code; no host here has
the model): per-step tables, text and reference rows included, with the prefix K/V cache off in the calls whose
table changes; upstream's stale keys where the cache is left on; bit-identical at or below the trained size with the
cache running; the batch layout of the fused kernel. SEGA's recipes: test_qwen_image21_sega.py."""

from __future__ import annotations

import pytest
import qwen_image21_standin as standin
import tiny_models
import torch
from capture import capture
from patching import BASE_TOKENS, _pack, dype, expected_table

pytestmark = pytest.mark.usefixtures("comfy_host")

FAMILY = standin.FAMILY
GRID = (8, 12)  # scales 2 and 3 over the tests' 4-token base


def sample(model, grid=GRID, *, steps=3, cfg=1.0, batch=1, positive=None, negative=None, sampler="euler", seed=0):
    import comfy.sample

    latent = torch.zeros(batch, 64, *grid)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(seed))
    return comfy.sample.sample(model, noise, steps, cfg, sampler, "simple", positive or tiny_models.qwen_cond(7, 1),
                               negative or tiny_models.qwen_cond(5, 2), latent, seed=seed, disable_pbar=True)


def with_cache_log(model):
    """(clone, log): after every model call, the stand-in's prefix cache as (fills, hits), None when there is none."""
    import comfy.patcher_extension as ext

    log, clone = [], model.clone()

    def record(executor, *args, **kwargs):
        out = executor(*args, **kwargs)
        cache = executor.class_obj.diffusion_model.prefix_cache
        log.append(None if cache is None else (cache.fills, cache.hits))
        return out

    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_cache_log", record)
    return clone, log


def edit_cond(seed: int = 1):
    """A prompt of 9 tokens with two references spliced in at slots 3 and 6: one of odd and one of even size
    (half-token offsets against the target's parity on one axis each)."""
    refs = [torch.randn(1, 64, 5, 6, generator=torch.Generator().manual_seed(seed)),
            torch.randn(1, 64, 4, 7, generator=torch.Generator().manual_seed(seed + 1))]
    return tiny_models.qwen_cond(9, seed, reference_latents=refs, image_slots=[3, 6])


def test_detected_as_qwen_image21_and_its_embedder_replaced():
    model = standin.build(0)
    assert _pack("nodes.families").detect_family(model.model).name == "qwen_image21"
    patched = dype(model)
    assert type(patched.get_model_object("diffusion_model.pe_embedder")).__name__ == "ExtrapolatingRopeEmbedder"
    assert type(model.get_model_object("diffusion_model.pe_embedder")).__name__ == "EmbedND"  # input untouched


@pytest.mark.parametrize(("sampler", "cfg", "neg_tokens"), [("euler", 1.0, 5), ("dpmpp_2m", 2.5, 7), ("heun", 2.0, 5)])
@pytest.mark.parametrize("base_px", [0, 8 * 16, 12 * 16])  # the family's 2752 px; the grid's rows; its columns
def test_at_or_below_the_trained_size_bit_identical_with_the_cache_running(sampler, cfg, neg_tokens, base_px):
    """(c) Stock tables, and the prefix cache left as the model sets it: filled once per prompt, then read."""
    model = standin.build(0)
    patched = _pack("nodes.rope_patch.clone").patch_model(
        dype(model, base_px=base_px),
        lambda c: c.with_sega(_pack("spectral").SegaSettings(recipe="refined"), base_px))
    runs = []
    for each in (model, patched):
        clone, log = with_cache_log(each)
        runs.append(sample(clone, (8, 8) if base_px == 8 * 16 else GRID, cfg=cfg, sampler=sampler,
                           positive=edit_cond(), negative=tiny_models.qwen_cond(neg_tokens, 2)))
        assert log[-1] is not None and log[-1][1] > 0  # the cache served later steps
    assert torch.equal(runs[0], runs[1])


@pytest.mark.parametrize("schedule", [dict(method="yarn"), dict(method="ntk"), dict(method="pi", lambda_s=1.0)])
def test_tables_are_each_steps_own_text_and_references_included(schedule):
    """(a) Every call's table, every row (text segments, both references with their half tokens, the target), is
    rope/'s for that call's sigma; one (1, 1, N, ...) table for the batch; the cache never used."""
    import comfy.samplers

    model = standin.build(0)
    clone, log = with_cache_log(dype(model, **schedule))
    with capture(clone) as (patched, calls):
        sample(patched, steps=3, cfg=2.0, positive=edit_cond(), negative=edit_cond(7))
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 3)
    assert [c.sigma[0].item() for c in calls] == pytest.approx(sigmas[:-1].tolist(), abs=0)
    assert log == [None] * 3  # per-step tables: the prefix cache is off in every call
    for call in calls:
        (ids, pe), = call.tables
        assert ids.shape[0] == 1 and pe.shape[:3] == (1, 1, ids.shape[1])  # the layout rms_rope takes
        assert torch.equal(pe, expected_table(ids, call.sigma[:1], GRID, BASE_TOKENS, FAMILY, **schedule))
        halves = torch.remainder(ids[0, :, 1:], 1.0) == 0.5
        assert halves.any(dim=0).all()  # half-token reference positions on both axes, kept fractional
        # the first text segment (before the slot at 3): positions 0..2 on all three columns, as upstream
        assert torch.equal(ids[0, :3], torch.arange(3.0)[:, None].expand(3, 3))


def test_with_the_cache_left_on_the_text_keys_keep_the_first_steps_rotation(monkeypatch):
    """(b) Upstream's cache with a per-step table and nothing turning it off (the route bypassed): later steps read
    the text and reference keys rotated by step 1's table, though the table of their rows changed. The pack's run
    equals the one with the cache off by the user, and differs from the stale one."""
    wrappers = _pack("nodes.rope_patch.wrappers")
    model = standin.build(0)
    patched = dype(model)
    with capture(patched) as (clone, calls):
        exact = sample(clone, positive=edit_cond())
    prefix = calls[0].tables[0][1].shape[2] - GRID[0] * GRID[1]
    first, last = (call.tables[0][1][:, :, :prefix] for call in (calls[0], calls[-1]))
    assert not torch.equal(first, last)  # the text and reference rows' rotation changes between steps

    off = patched.clone()
    off.model_options["transformer_options"][standin.CACHE_OPTION] = {"device": "off", "dtype": "default"}
    assert torch.equal(sample(off, positive=edit_cond()), exact)

    monkeypatch.setattr(wrappers, "per_step_options", lambda options, *args, **kwargs: options)
    stale_clone, log = with_cache_log(patched)
    stale = sample(stale_clone, positive=edit_cond())
    assert log[-1] == (1, 2)  # filled at step 1, read at steps 2 and 3
    assert not torch.equal(stale, exact)


def test_a_static_table_keeps_the_cache():
    """DyPE with dynamic off and no SEGA: the same table at every step, so cached keys are exact and stay on."""
    model = standin.build(0)
    clone, log = with_cache_log(dype(model, method="yarn", dynamic=False))
    cached = sample(clone, positive=edit_cond())
    assert log[-1] == (1, 2)
    off = clone.clone()
    off.model_options["transformer_options"][standin.CACHE_OPTION] = {"device": "off"}
    torch.testing.assert_close(sample(off, positive=edit_cond()), cached, rtol=1e-5, atol=1e-6)


def test_the_users_cache_settings_stay_on_the_clone_and_only_the_device_is_switched():
    prefix_cache = _pack("nodes.rope_patch.prefix_cache")
    families, config = _pack("nodes.families"), _pack("nodes.rope_patch.config").PatchConfig()
    model = standin.build(0)
    dynamic = config.with_positions(_pack("rope").PositionSchedule(), 64)
    user = {standin.CACHE_OPTION: {"device": "cpu", "dtype": "int8"}, "other": 1}
    out = prefix_cache.per_step_options(user, families.QWEN_IMAGE21, model.model, dynamic)
    assert out == {standin.CACHE_OPTION: {"device": "off", "dtype": "int8"}, "other": 1}
    assert user == {standin.CACHE_OPTION: {"device": "cpu", "dtype": "int8"}, "other": 1}  # not written
    assert prefix_cache.per_step_options({}, families.QWEN_IMAGE21, model.model, dynamic) == {
        standin.CACHE_OPTION: {"device": "off"}}
    # no cache attribute on the diffusion model (attribute detection), or a family without one: as they are
    plain = torch.nn.Module()
    plain.diffusion_model = torch.nn.Linear(1, 1)
    assert prefix_cache.per_step_options(user, families.QWEN_IMAGE21, plain, dynamic) is user
    assert prefix_cache.per_step_options(user, families.QWEN_IMAGE, model.model, dynamic) is user
    static = config.with_positions(_pack("rope").PositionSchedule(dynamic=False), 64)
    assert prefix_cache.per_step_options(user, families.QWEN_IMAGE21, model.model, static) is user
    patched = dype(model)
    patched.model_options["transformer_options"][standin.CACHE_OPTION] = {"device": "cpu", "dtype": "int8"}
    sample(patched)
    assert patched.model_options["transformer_options"][standin.CACHE_OPTION] == {"device": "cpu", "dtype": "int8"}


def test_another_nodes_hook_turns_the_cache_off_as_upstream_does():
    """Upstream's own rule, which the stand-in keeps: an attn1_patch (the eager rotary path) rules the cache out;
    the pack's tables reach that path too."""
    model = dype(standin.build(0))
    seen = []

    def attn1(q, k, v, pe=None, attn_mask=None, extra_options=None):
        seen.append(pe.shape)
        return {}

    model.set_model_attn1_patch(attn1)
    clone, log = with_cache_log(model)
    with capture(clone) as (patched, calls):
        sample(patched, positive=edit_cond(), steps=2)
    assert log == [None, None] and seen and seen[0][:2] == (1, 1)  # (1, 1, N, ...) as the patches see it
    for call in calls:
        ids, pe = call.tables[0]
        assert torch.equal(pe, expected_table(ids, call.sigma[:1], GRID, BASE_TOKENS, FAMILY, method="yarn"))


def test_batches_take_one_table_unless_sega_temperatures_differ_per_image():
    """DyPE on a batch of 2 with CFG: one (1, ...) table. SEGA's per-image temperatures: a table per row of the
    call (4: two images, cond and uncond), each its image's; the kernel's layout check takes a table batch of 1 or B."""
    model = standin.build(0)
    with capture(dype(model)) as (clone, calls):
        sample(clone, batch=2, cfg=2.0, steps=1, negative=tiny_models.qwen_cond(7, 2))
    assert calls[0].tables[0][1].shape[0] == 1 and calls[0].x.shape[0] == 4
    sega = _pack("nodes.rope_patch.clone").patch_model(
        dype(model), lambda c: c.with_sega(_pack("spectral").SegaSettings(recipe="refined"), 64))
    with capture(sega) as (clone, calls):
        sample(clone, batch=2, cfg=2.0, steps=1, negative=tiny_models.qwen_cond(7, 2), seed=3)
    pe = calls[0].tables[0][1]
    assert pe.shape[0] == 4 and torch.equal(pe[0], pe[2]) and torch.equal(pe[1], pe[3])
    assert not torch.equal(pe[0], pe[1])


def test_the_cache_off_route_costs_the_prefix_rows_at_every_step():
    """What turning the cache off costs per step, counted two ways that must agree: torch's FLOP counter on the
    stand-in, and the prefix rows' work by hand (per block: 26·P·d² in the q/k/v/out projections and the SwiGLU
    MLP of ratio 3, plus 4·d·Nq·Nk per prefix attention segment; text segments causal, the reference over
    everything before its end). docs/models.md quotes the counter at realistic proportions."""
    from torch.utils.flop_counter import FlopCounterMode

    model = standin.build(0).model.diffusion_model
    x, context = torch.randn(1, 64, 16, 16), torch.randn(1, 6, 32)
    refs, t = [torch.randn(1, 64, 4, 4)], torch.tensor([0.5])

    def flops(**options):
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(x, t, context, refs, [3], transformer_options=options)
        return counter.get_total_flops()

    model.reset_prefix_cache(True)
    fill = flops()
    hit = flops()
    off = flops(**{standin.CACHE_OPTION: {"device": "off"}})
    assert model.prefix_cache.fills == 1 and model.prefix_cache.hits == 1 and fill == off
    d, prefix = 256, 3 + 16 + 3
    segments = [(3, 3), (16, 3 + 16), (3, prefix)]  # (queries, keys): text, the reference, text
    per_block = 26 * prefix * d * d + 4 * d * sum(q * k for q, k in segments)
    assert off - hit == len(model.transformer_blocks) * per_block
