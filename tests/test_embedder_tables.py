"""The replacement embedder's tables on the real host, sampled with ComfyUI's own Flux and Qwen-Image: every table is
rope/'s formula bit for bit (each token's own cos/sin, float64 angles), whatever the ids are (non-integer, far away,
moved between calls), with a gradient where the schedule carries one; nothing reads a device value per step; under
torch.compile no graph break from our frames, no recompile per step, and no more graphs per new size than stock."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from capture import capture
from patching import BASE_TOKENS, dype, expected_table

pytestmark = pytest.mark.usefixtures("comfy_host")

GRID = (32, 24)  # tokens: above the tiny models' trained 8-token grid on both axes


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def _sample_and_check(model, family: str, cfg: float, steps: int = 3, grid=GRID, negative_tokens: int = 5):
    """Sample, and check every table against rope/'s formula; returns the captured model calls."""
    fam = tiny_models.FAMILIES[family]
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, family, tokens=grid, steps=steps, cfg=cfg, negative=fam.cond(negative_tokens, 2))
    for call in calls:
        (ids, pe), = call.tables
        expected = expected_table(ids, call.sigma, grid, BASE_TOKENS, fam)
        assert pe.shape == expected.shape and pe.is_contiguous() and pe.dtype == torch.float32
        assert torch.equal(pe, expected)
    return calls


@pytest.mark.parametrize("family", ["flux", "qwen_image"])
@pytest.mark.parametrize(("cfg", "negative_tokens", "calls_per_step"), [
    (1.0, 5, 1),  # cond only
    (3.0, 7, 1),  # one CFG batch of 2 (cond and uncond rows share the ids and the schedule)
    (3.0, 5, 2),  # split conds: different text lengths, one call each
])
def test_tables_are_the_formula_bit_for_bit(family, cfg, negative_tokens, calls_per_step):
    steps = 3
    calls = _sample_and_check(dype(tiny_models.build(family)), family, cfg, steps, negative_tokens=negative_tokens)
    assert len(calls) == steps * calls_per_step
    if calls_per_step == 1 and cfg != 1.0:
        assert calls[-1].tables[0][1].shape[0] == 2


@pytest.mark.parametrize("rope_options", [{"scale_y": 0.75, "shift_x": 0.5}, {"shift_y": 0.25}])
def test_non_integer_ids_get_the_formula(rope_options):
    model = dype(tiny_models.build_flux(0))
    model.model_options["transformer_options"]["rope_options"] = rope_options
    calls = _sample_and_check(model, "flux", 3.0, negative_tokens=7)
    ids = calls[0].tables[0][0]
    assert not torch.equal(ids, ids.round())  # the premise of the test: positions off the integer grid


def test_ids_far_away_get_the_formula():
    """Integer ids far from the grid (a post_input patch moving the image by 10 000 rows)."""
    model = dype(tiny_models.build_flux(0))

    def far_away(args):
        img_ids = args["img_ids"].clone()
        img_ids[..., 1] += 10_000
        return {**args, "img_ids": img_ids}

    model.set_model_patch(far_away, "post_input")
    calls = _sample_and_check(model, "flux", 1.0)
    assert calls[0].tables[0][0][..., 1].max() >= 10_000


def test_ids_that_move_between_calls_get_the_formula():
    """A patch whose ids change from one call to the next (same inputs): every table is that call's ids' formula."""
    model = dype(tiny_models.build_flux(0))
    seen = []

    def moves_later(args):
        seen.append(None)
        return {**args, "img_ids": args["img_ids"] + 0.5 * (len(seen) - 1)}

    model.set_model_patch(moves_later, "post_input")
    calls = _sample_and_check(model, "flux", 1.0, steps=3)
    assert len(calls) == 3 and not torch.equal(calls[0].tables[0][0], calls[2].tables[0][0])


def _is_pack_source(filename: str) -> bool:
    return _pack("nodes.bench.sources").is_pack_source(filename)


@pytest.mark.parametrize("with_sega", [False, "paper", "port", "refined"])
def test_the_per_step_path_reads_no_tensor_value(monkeypatch, with_sega):
    """No .item()/bool()/tolist() of a tensor from our code during the steps, DyPE or DyPE + SEGA (each recipe,
    "paper" with its patch-embedding pass), CFG batch; the end-of-run report reads SEGA's flags in one transfer."""
    import traceback

    from test_sega_host import sega

    reads = []

    def spy(name):
        real = getattr(torch.Tensor, name)

        def read(self, *args, **kwargs):
            caller = traceback.extract_stack(limit=2)[0]  # the frame that asked for the value
            if _is_pack_source(caller.filename):
                reads.append((caller.name, self.device.type))
            return real(self, *args, **kwargs)

        return read

    model = dype(tiny_models.build_flux(0))
    if with_sega:
        model = sega(model, recipe=with_sega)
    for name in ("item", "tolist", "__bool__", "__float__", "__int__"):
        monkeypatch.setattr(torch.Tensor, name, spy(name))
    tiny_models.sample(model, "flux", tokens=GRID, steps=4, cfg=3.0, negative=tiny_models.flux_cond(7, 2))
    monkeypatch.undo()
    assert [name for name, _ in reads] == (["_report_run"] if with_sega else []), reads


def _breaks_from_our_frames(explained) -> list[str]:
    return [b.reason.splitlines()[0] for b in explained.break_reasons
            if any(_is_pack_source(f.filename) for f in b.user_stack)]


def _patched_flux():  # DyPE + SEGA: every per-call path of ours (the embedder is the same with DyPE alone)
    from test_sega_host import sega

    return sega(dype(tiny_models.build_flux(0)))


def _frames_per_call(model, runs) -> list[int]:
    """ComfyUI's torch.compile wrapper on ``model`` (a counting backend); frames compiled so far after each model
    call of ``runs(model)``."""
    import comfy.patcher_extension as ext
    from comfy_api.torch_helpers.torch_compile import set_torch_compile_wrapper
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    set_torch_compile_wrapper(model, backend=counter)
    frames = []

    def count(executor, *args, **kwargs):
        out = executor(*args, **kwargs)
        frames.append(counter.frame_count)
        return out

    model.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_count", count)
    try:
        runs(model)
    finally:
        torch._dynamo.reset()
    return frames


def test_torch_compile_no_graph_break_from_our_frames_and_no_recompile_per_step():
    """dynamo traces the patched diffusion model with no break in our code (the host's own breaks are the same as
    stock) and compiles it at the first call only: not per step (sigma is a tensor input), not in the next run.
    Same samples as eager."""
    import comfy.patcher_extension as ext

    explained = {}
    for name, build in (("stock", lambda: tiny_models.build_flux(0)), ("patched", _patched_flux)):
        model = build().clone()

        def explain(executor, *args, name=name, **kwargs):
            if name not in explained:
                explained[name] = torch._dynamo.explain(executor.class_obj._forward)(*args, **kwargs)
            return executor(*args, **kwargs)

        model.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_explain", explain)
        try:
            tiny_models.sample(model, "flux", tokens=GRID, steps=1, cfg=1.0)
        finally:
            torch._dynamo.reset()
    assert _breaks_from_our_frames(explained["patched"]) == []
    assert explained["patched"].graph_break_count == explained["stock"].graph_break_count

    negative = tiny_models.flux_cond(7, 2)
    runs = []
    frames = _frames_per_call(_patched_flux(), lambda model: runs.extend(
        tiny_models.sample(model, "flux", tokens=GRID, steps=4, cfg=3.0, negative=negative) for _ in range(2)))
    assert len(frames) == 8 and len(set(frames)) == 1, frames  # nothing compiled after the first call
    eager = tiny_models.sample(_patched_flux(), "flux", tokens=GRID, steps=4, cfg=3.0, negative=negative)
    assert torch.equal(runs[0], eager) and torch.equal(runs[1], eager)


def test_torch_compile_no_more_graphs_per_new_size_than_stock():
    """Sampled at four sizes one after the other, the patched model compiles no more frames at each new size than the
    stock model does (stock runs these sizes at the trained size's formula; ours above it)."""
    sizes = [(16, 12), (20, 16), (24, 20), (28, 24)]

    def runs(model):
        for tokens in sizes:
            tiny_models.sample(model, "flux", tokens=tokens, steps=2, cfg=1.0)

    stock = _frames_per_call(tiny_models.build_flux(0).clone(), runs)
    patched = _frames_per_call(_patched_flux(), runs)
    per_size = [frames[::2] for frames in (stock, patched)]  # after the first call of each size
    assert len(patched) == len(stock) == 2 * len(sizes)
    assert all(ours <= theirs for ours, theirs in zip(per_size[1], per_size[0], strict=True)), (stock, patched)


@pytest.mark.parametrize("negative_tokens", [7, 5])  # one CFG batch of 2; split conds (one call each)
def test_schedule_and_allocation_once_per_step(monkeypatch, negative_tokens):
    """DyPE + SEGA: the frequencies, the spectrum and SEGA's allocation are built once per step on the step's one
    sample and shared by the cond and uncond rows (bit-identity of the result is the parity tests')."""
    schedule = _pack("nodes.rope_patch.schedule")
    schedules = []
    real_schedules = schedule._axis_schedules

    def counted_schedules(*args, **kwargs):
        schedules.append(args[3].shape[0])  # rows of x it was built for
        return real_schedules(*args, **kwargs)

    monkeypatch.setattr(schedule, "_axis_schedules", counted_schedules)
    steps = 3
    with capture(_patched_flux()) as (clone, calls):
        tiny_models.sample(clone, "flux", tokens=GRID, steps=steps, cfg=3.0,
                           negative=tiny_models.flux_cond(negative_tokens, 2))
    assert len(calls) == steps * (1 if negative_tokens == 7 else 2)
    assert schedules == [1] * steps


def test_a_table_that_carries_a_gradient_has_the_formulas_gradient():
    """DyPE + SEGA on a latent that requires grad, in grad mode (uni_pc on 0.3.75, guidance samplers): the
    temperatures carry a gradient and the table passes it on; value and gradient equal rope/'s formula applied to
    the call's own schedule."""
    schedule, scopes, families, config, rope = (_pack(n) for n in (
        "nodes.rope_patch.schedule", "nodes.rope_patch.scopes", "nodes.families", "nodes.rope_patch.config", "rope"))
    model = _patched_flux()
    ours = model.get_model_object("diffusion_model.pe_embedder")
    settings = config.read_config(model.model_options["transformer_options"])
    rows, cols = GRID
    img = torch.stack(torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij"), -1).reshape(-1, 2)
    ids = torch.cat([torch.zeros(7, 3), torch.cat([torch.zeros(rows * cols, 1), img], -1)])[None].float()
    x = torch.randn(1, 16, 2 * rows, 2 * cols, generator=torch.Generator().manual_seed(0)).requires_grad_(True)

    with torch.enable_grad():
        scope = schedule.build_call_scope(settings, families.FLUX, ours, x, torch.tensor([0.7]))
        with scopes.CALL.holding(scope):
            table = ours(ids)
        by_column = {axis.column: axis for axis in scope.axes}
        parts = [rope.rotation_table(ids[..., c], by_column[c].freqs, by_column[c].temperature) if c in by_column
                 else rope.rotation_table(ids[..., c], rope.plain_frequencies(dim, float(ours.theta))[None])
                 for c, dim in enumerate(ours.axes_dim)]
        formula = torch.cat(parts, dim=-3).unsqueeze(1)
        weights = torch.randn(table.shape, generator=torch.Generator().manual_seed(1))
        (grad,) = torch.autograd.grad((table * weights).sum(), x, retain_graph=True)  # the schedule is shared
        (formula_grad,) = torch.autograd.grad((formula * weights).sum(), x)
    assert table.requires_grad and torch.equal(table, formula) and torch.equal(grad, formula_grad)
    assert grad.abs().sum() > 0
