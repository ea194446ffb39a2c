"""The embedder's window (gather) path on the real host, sampled with ComfyUI's own Flux and Qwen-Image: every table
is bit for bit the stock formula's, the gather runs only after its ids signature was checked, ids that are not
integers in the window (rope_options, a post_input patch) always get the stock formula, and nothing reads a device
value per step."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from capture import capture
from patching import ALL_FAMILIES, BASE_TOKENS, base_px, check_tables, dype, expected_table, host_family

pytestmark = pytest.mark.usefixtures("comfy_host")

GRID = (32, 24)  # tokens: the window (2 * (32 + text) + 1 positions) is well under the 768 image tokens


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture
def gathers(monkeypatch):
    """Count the embedder's window gathers (the fast path) while still running them."""
    tables = _pack("nodes.rope_patch.tables")
    calls = []
    real = tables.gather_tables

    def counted(parts):
        calls.append(len(parts))
        return real(parts)

    monkeypatch.setattr(tables, "gather_tables", counted)
    return calls


def _sample_and_check(model, family: str, cfg: float, steps: int = 3, grid=GRID, negative_tokens: int = 5):
    """Sample, and check every table against the stock formula; returns the captured model calls."""
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
    (3.0, 5, 2),  # split conds: different text lengths, one call each (two ids signatures)
])
def test_gathered_tables_are_the_stock_formula_bit_for_bit(family, cfg, negative_tokens, calls_per_step, gathers):
    steps = 3
    calls = _sample_and_check(dype(tiny_models.build(family)), family, cfg, steps, negative_tokens=negative_tokens)
    assert len(calls) == steps * calls_per_step
    # the first call of each ids signature checks its ids with the stock formula; every later call gathers
    assert gathers == [3] * (len(calls) - calls_per_step)
    if calls_per_step == 1 and cfg != 1.0:
        assert calls[-1].tables[0][1].shape[0] == 2


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_every_family_gathers_the_stock_formula(family, gathers):
    """Every supported family on this host: after the first call checked its ids, the calls gather, and every table
    (every embedder call of every model call: Lumina embeds caption and image separately) is rope/'s, bit for bit."""
    fam = host_family(family)
    with capture(dype(fam.build(0), base_px(family)), fam.embedder_attr) as (model, calls):
        tiny_models.sample(model, family, tokens=GRID, steps=3, cfg=2.0, negative=fam.cond(7, 2))
    check_tables(fam, calls, GRID, BASE_TOKENS)
    embedder, rope = _pack("nodes.rope_patch.embedder"), _pack("rope")
    ids = calls[0].tables[-1][0]
    radius = rope.window_radius(ids.shape[-2], GRID)
    pays = embedder.MIN_TOKENS_PER_WINDOW_POSITION * (2 * radius + 1) <= ids.shape[-2]
    fits = bool(torch.equal(ids, ids.round()) and ids.abs().max() <= radius)
    # Flux.2 pads its text to 512 tokens: at this tiny grid the window would be wider than it saves. Lumina 2 and
    # Z-Image on newer hosts embed the image alone with positions after the caption's: outside the window, so the
    # check sends them to the stock formula (exact; no speed-up for them).
    assert bool(gathers) == (pays and fits), (ids.shape, radius, gathers)
    if family in ("flux", "qwen_image", "chroma", "hidream", "hunyuan_image"):
        assert gathers


@pytest.mark.parametrize("rope_options", [{"scale_y": 0.75, "shift_x": 0.5}, {"shift_y": 0.25}])
def test_non_integer_ids_get_the_stock_formula(rope_options, gathers):
    model = dype(tiny_models.build_flux(0))
    model.model_options["transformer_options"]["rope_options"] = rope_options
    calls = _sample_and_check(model, "flux", 3.0, negative_tokens=7)
    ids = calls[0].tables[0][0]
    assert not torch.equal(ids, ids.round())  # the premise of the test: positions off the integer grid
    assert gathers == []


def test_ids_outside_the_window_get_the_stock_formula(gathers):
    """Integer ids far outside the window (a post_input patch moving the image by 10 000 rows)."""
    model = dype(tiny_models.build_flux(0))

    def far_away(args):
        img_ids = args["img_ids"].clone()
        img_ids[..., 1] += 10_000
        return {**args, "img_ids": img_ids}

    model.set_model_patch(far_away, "post_input")
    _sample_and_check(model, "flux", 1.0)
    assert gathers == []


def test_ids_that_move_under_one_signature_get_the_stock_formula(gathers):
    """A patch whose ids change between calls of one signature defeats the per-signature check; on the CPU the
    gathered call's flag is read before the gather (free: no device), so that call and the signature's later calls
    take the stock formula: every table exact, nothing gathered. (The device path: tests/test_fault_matrix.py.)"""
    model = dype(tiny_models.build_flux(0))
    seen = []

    def moves_later(args):
        seen.append(None)
        if len(seen) == 1:
            return args
        return {**args, "img_ids": args["img_ids"] + 0.5}

    model.set_model_patch(moves_later, "post_input")
    calls = _sample_and_check(model, "flux", 1.0, steps=3)
    assert len(calls) == 3 and gathers == []


def _is_pack_source(filename: str) -> bool:
    return _pack("nodes.bench.sources").is_pack_source(filename)


@pytest.mark.parametrize("with_sega", [False, "paper", "port", "refined"])
def test_the_per_step_path_reads_no_tensor_value(monkeypatch, gathers, with_sega):
    """No .item()/bool()/tolist() of a device tensor from our code during the steps, DyPE or DyPE + SEGA (each
    recipe, "paper" with its patch-embedding pass), CFG batch: the first call's check reads its flag once and each
    gathered call reads its own flag before gathering, all CPU tensors here (no device wait; a CUDA flag is never read
    before a gather and the check's is copied without blocking: tests/test_cuda.py); the end-of-run report reads
    SEGA's flags in one transfer."""
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
    assert len(gathers) == 3
    expected = ["send_to_host"] + ["embed_ids_checked"] * len(gathers) + (["_report_run"] if with_sega else [])
    assert sorted(name for name, _ in reads) == sorted(expected), reads
    assert {device for _, device in reads} == {"cpu"}


def _breaks_from_our_frames(explained) -> list[str]:
    return [b.reason.splitlines()[0] for b in explained.break_reasons
            if any(_is_pack_source(f.filename) for f in b.user_stack)]


def test_torch_compile_no_graph_break_from_our_frames_and_no_recompile_per_step():
    """dynamo traces the patched diffusion model with no break in our code (the host's own breaks, e.g. psutil in
    sub-quadratic attention's memory check, are the same as stock), compiles once more when the ids check lands after
    the first call, then never again: not per step (sigma is a tensor input), not in the next run. Same samples as
    eager."""
    import comfy.patcher_extension as ext
    from comfy_api.torch_helpers.torch_compile import set_torch_compile_wrapper
    from test_sega_host import sega
    from torch._dynamo.testing import CompileCounter

    def patched():  # DyPE + SEGA: every per-call path of ours (the embedder is the same with DyPE alone)
        return sega(dype(tiny_models.build_flux(0)))

    explained = {}
    for name, build in (("stock", lambda: tiny_models.build_flux(0)), ("patched", patched)):
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

    counter = CompileCounter()
    compiled = patched()
    set_torch_compile_wrapper(compiled, backend=counter)
    frames_after_call = []

    def count(executor, *args, **kwargs):
        out = executor(*args, **kwargs)
        frames_after_call.append(counter.frame_count)
        return out

    compiled.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_count", count)
    negative = tiny_models.flux_cond(7, 2)
    try:
        runs = [tiny_models.sample(compiled, "flux", tokens=GRID, steps=4, cfg=3.0, negative=negative)
                for _ in range(2)]
    finally:
        torch._dynamo.reset()
    assert len(set(frames_after_call[1:])) == 1, frames_after_call  # nothing compiled after the second call
    eager = tiny_models.sample(patched(), "flux", tokens=GRID, steps=4, cfg=3.0, negative=negative)
    assert torch.equal(runs[0], eager) and torch.equal(runs[1], eager)


@pytest.mark.parametrize("negative_tokens", [7, 5])  # one CFG batch of 2; split conds (one call each)
def test_schedule_and_allocation_once_per_step_and_broadcast_to_the_cfg_rows(monkeypatch, negative_tokens):
    """DyPE + SEGA: the frequencies, the spectrum and SEGA's allocation are built once per step on the step's one
    sample, and the gathered tables read that one row for the cond and the uncond rows (bit-identity of the result
    is the parity tests' and the tests above)."""
    from test_sega_host import sega

    schedule, tables = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.tables")
    schedules, window_rows = [], []
    real_schedules, real_gather = schedule._axis_schedules, tables.gather_tables

    def counted_schedules(*args, **kwargs):
        schedules.append(args[3].shape[0])  # rows of x it was built for
        return real_schedules(*args, **kwargs)

    def counted_gather(parts):
        window_rows.append({table.shape[0] for table, _ in parts})
        return real_gather(parts)

    monkeypatch.setattr(schedule, "_axis_schedules", counted_schedules)
    monkeypatch.setattr(tables, "gather_tables", counted_gather)
    steps = 3
    model = sega(dype(tiny_models.build_flux(0)))
    fam = tiny_models.FAMILIES["flux"]
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, "flux", tokens=GRID, steps=steps, cfg=3.0, negative=fam.cond(negative_tokens, 2))
    assert len(calls) == steps * (1 if negative_tokens == 7 else 2)
    assert schedules == [1] * steps
    assert window_rows and all(rows == {1} for rows in window_rows)


def test_a_table_that_carries_a_gradient_is_the_stock_formula_value_and_gradient(gathers):
    """DyPE + SEGA on a latent that requires grad, in grad mode (uni_pc on 0.3.75, guidance samplers): the
    temperatures carry a gradient, so the embedder builds the table per token even where the verdict allows the
    gather; value and gradient are the stock formula's bit for bit. The same call without grad gathers."""
    from test_sega_host import sega

    schedule, scopes, tables, families, config = (_pack(n) for n in (
        "nodes.rope_patch.schedule", "nodes.rope_patch.scopes", "nodes.rope_patch.tables", "nodes.families",
        "nodes.rope_patch.config"))
    model = sega(dype(tiny_models.build_flux(0)))
    ours = model.get_model_object("diffusion_model.pe_embedder")
    settings = config.read_config(model.model_options["transformer_options"])
    rows, cols = GRID
    img = torch.stack(torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij"), -1).reshape(-1, 2)
    ids = torch.cat([torch.zeros(7, 3), torch.cat([torch.zeros(rows * cols, 1), img], -1)])[None].float()
    x = torch.randn(1, 16, 2 * rows, 2 * cols, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    checked = {(0, tuple(ids.shape[1:]), ids.dtype): True}  # a later call of a checked signature

    def call(verdicts):
        scope = schedule.build_call_scope(settings, families.FLUX, ours, x, torch.tensor([0.7]), None, verdicts)
        with scopes.CALL.holding(scope):
            return ours(ids), scope

    with torch.enable_grad():
        table, scope = call(dict(checked))
        stock = tables.embed_ids(ids, ours.axes_dim, float(ours.theta), scope.axes)
        weights = torch.randn(table.shape, generator=torch.Generator().manual_seed(1))
        (grad,) = torch.autograd.grad((table * weights).sum(), x, retain_graph=True)  # the schedule is shared
        (stock_grad,) = torch.autograd.grad((stock * weights).sum(), x)
    assert table.requires_grad and torch.equal(table, stock) and torch.equal(grad, stock_grad)
    assert gathers == [] and grad.abs().sum() > 0
    with torch.no_grad():
        assert torch.equal(call(dict(checked))[0], stock) and gathers == [3]
