"""What only a GPU can check, each test beside its CPU twin (the same code on device "cpu", run by every suite, so the
CUDA variant's own logic is tested wherever the suite runs). The CUDA variants (marker ``cuda``) run in
scripts/gpu-check.sh on both hosts, with the host booted on the GPU as users run it; elsewhere they are skipped with
the reason (conftest.py).

* The ids check's event path: the first call's flag travels to the host by a non-blocking copy into pinned memory
  with an event, later calls gather once it has landed, and every table and the sampled latent equal a run with the
  stock formula only, bit for bit (Flux and Qwen-Image, fp32/bf16/fp16 weights, DyPE + SEGA); schedules are float64
  on the device.
* bf16/fp16 ids straight into the embedder: the gathered table is the stock formula's.
* A node that moves ids: on CUDA the run stops with WindowMissError and the next run is exact (CPU: exact at once).
* No host sync from our per-step code: CUDA's sync debug mode is "error" inside every per-step function of ours
  (the step and model-call wrappers, the embedder) and "default" inside the host's code they call.
* comfy-kitchen's apply_rope (0.30) on CUDA tensors with our per-sample scaled tables, per backend.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

import pytest
import tiny_models
import torch
from capture import capture
from fault_matrix.rows_fast_path import counted_gathers, moving_ids, stock_formula_only
from patching import _pack, dype
from test_sega_host import sega
from test_worker_threads_and_devices import _kitchen, _scaled_per_sample_table

pytestmark = pytest.mark.usefixtures("comfy_host")

GRID = (32, 24)  # tokens: the window pays off (test_embedder_fast_path.py)
FAMILIES = ("flux", "qwen_image")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def cuda(*values, name: str):
    """A parameter set that needs CUDA (marker ``cuda``)."""
    return pytest.param(*values, marks=pytest.mark.cuda, id=name)


def synced(device: str):
    """A sampler callback that makes the host wait for the device after each step (the test's wait, outside the
    pack's code): the first call's check has then landed before the next call, so the gathers are counted exactly."""

    def callback(*_):
        if device == "cuda":
            torch.cuda.synchronize()

    return callback


SAMPLING_CASES = [pytest.param("cpu", f, "float32", id=f"cpu-{f}-float32") for f in FAMILIES] + [
    cuda("cuda", f, d, name=f"cuda-{f}-{d}") for f in FAMILIES for d in DTYPES]


@pytest.mark.parametrize(("device", "family", "dtype"), SAMPLING_CASES)
def test_window_path_equals_the_stock_formula(device, family, dtype, monkeypatch):
    ids_check, wrappers = _pack("nodes.rope_patch.ids_check"), _pack("nodes.rope_patch.wrappers")
    sent, scopes = [], []
    real_send, real_scope = ids_check.send_to_host, wrappers.build_call_scope

    def send(flag):
        sent.append(real_send(flag))
        return sent[-1]

    def build_scope(*args, **kwargs):
        scopes.append(real_scope(*args, **kwargs))
        return scopes[-1]

    monkeypatch.setattr(ids_check, "send_to_host", send)
    monkeypatch.setattr(wrappers, "build_call_scope", build_scope)
    fam = tiny_models.FAMILIES[family]
    model = sega(dype(tiny_models.build(family, 0, device=device, dtype=DTYPES[dtype])))
    steps, negative = 4, fam.cond(7, 2)  # as long as the positive: one CFG batch of 2 rows per step
    with counted_gathers() as gathers, capture(model) as (clone, calls):
        out = tiny_models.sample(clone, family, tokens=GRID, steps=steps, cfg=3.0, negative=negative,
                                 callback=synced(device))
    with stock_formula_only(), capture(model) as (clone, stock_calls):
        stock = tiny_models.sample(clone, family, tokens=GRID, steps=steps, cfg=3.0, negative=negative)

    assert len(calls) == steps and gathers == [3] * (steps - 1), gathers
    if device == "cuda":  # the check's flag and each gathered call's flag went by copy + event, never read at once
        assert len(sent) == steps and all(isinstance(s, ids_check.HostFlag) for s in sent), sent
        assert all(s.done is not None and s.host.is_pinned() and s.host.device.type == "cpu" for s in sent)
    else:  # a CPU flag is read at once: the check's; each gathered call's was read before its gather
        assert sent == [False]
    for call, stock_call in zip(calls, stock_calls, strict=True):
        ((ids, table),), ((stock_ids, stock_table),) = call.tables, stock_call.tables
        assert table.device.type == device and table.dtype == torch.float32 and table.is_contiguous()
        assert torch.equal(ids, stock_ids) and torch.equal(table, stock_table)
    assert torch.isfinite(out).all() and torch.equal(out, stock)
    assert scopes and all(axis.freqs.dtype == torch.float64 and axis.freqs.device.type == device
                          for scope in scopes for axis in scope.axes)
    if device == "cuda" and dtype == "float32":  # the same first call on the CPU: the same schedule and table
        with capture(sega(dype(tiny_models.build(family, 0)))) as (clone, cpu_calls):
            tiny_models.sample(clone, family, tokens=GRID, steps=1, cfg=3.0, negative=negative)
        # SEGA's FFT is float32 (cuFFT vs pocketfft): temperatures agree to ~1e-6; a wrong schedule is off by >1e-2
        torch.testing.assert_close(calls[0].tables[0][1].cpu(), cpu_calls[0].tables[0][1], rtol=0, atol=1e-4)


@pytest.mark.parametrize(("device", "dtype"), [pytest.param("cpu", d, id=f"cpu-{d}") for d in DTYPES]
                         + [cuda("cuda", d, name=f"cuda-{d}") for d in DTYPES])
def test_half_precision_ids_gather_the_stock_formula(device, dtype):
    """Ids in bf16/fp16 (a node may pass them so; bf16 holds integers exactly only up to 256, beyond which they round
    to other integers): checked like any ids, and the gathered table is the stock formula's on those ids."""
    schedule, scopes, tables, families, config = (_pack(n) for n in (
        "nodes.rope_patch.schedule", "nodes.rope_patch.scopes", "nodes.rope_patch.tables", "nodes.families",
        "nodes.rope_patch.config"))
    model = sega(dype(tiny_models.build_flux(0)))
    ours = model.get_model_object("diffusion_model.pe_embedder")
    settings = config.read_config(model.model_options["transformer_options"])
    rows, cols, text = 320, 16, 7
    grid = torch.stack(torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij"), -1).reshape(-1, 2)
    ids = torch.cat([torch.zeros(text, 3), torch.cat([torch.zeros(rows * cols, 1), grid], -1)])[None]
    ids = ids.to(device=device, dtype=DTYPES[dtype])
    x = torch.randn(1, 16, 2 * rows, 2 * cols, generator=torch.Generator().manual_seed(0)).to(device)
    sigma = torch.tensor([0.7], device=device)
    key = (0, tuple(ids.shape[1:]), ids.dtype)

    def call(verdicts: dict):
        scope = schedule.build_call_scope(settings, families.FLUX, ours, x, sigma, None, verdicts)
        with scopes.CALL.holding(scope):
            return ours(ids), scope

    with torch.no_grad(), counted_gathers() as gathers:
        checked, scope = call({})  # a signature's first call: the stock formula and the window flag
        ((_, flag),) = scope.window_flags
        fast, _ = call({key: True})  # a later call: gathered
        stock = tables.embed_ids(ids, ours.axes_dim, float(ours.theta), scope.axes)
    assert not flag.gathered and not bool(flag.missed)
    assert gathers == [3] and fast.device.type == device
    assert torch.equal(fast, stock) and torch.equal(checked, stock)
    if dtype == "bfloat16":
        assert ids[0, text:, 1].unique().numel() < rows  # the premise: bf16 rounded some rows together


@pytest.mark.parametrize("device", ["cpu", cuda("cuda", name="cuda")])
def test_moving_ids_never_end_as_a_normal_result(device):
    """The moving-ids node (fault_matrix/rows_fast_path.py, ShiftFromSecondCall): on the CPU detected before the gather (exact at
    once); on CUDA the run stops with WindowMissError and the same model's next run is exact."""
    errors = _pack("nodes.rope_patch.errors")
    steps = 5
    with stock_formula_only():
        reference_model, _ = moving_ids(dype(tiny_models.build_flux(0, device=device)))
        reference = tiny_models.sample(reference_model, "flux", tokens=GRID, steps=steps)
    model, mover = moving_ids(dype(tiny_models.build_flux(0, device=device)))
    if device == "cuda":
        with pytest.raises(errors.WindowMissError, match="'tests_move'"):
            tiny_models.sample(model, "flux", tokens=GRID, steps=steps, callback=synced(device))
        mover.calls = 0
    out = tiny_models.sample(model, "flux", tokens=GRID, steps=steps, callback=synced(device))
    assert torch.equal(out, reference)


class SyncDebug:
    """CUDA's sync debug mode per region: "error" inside the pack's per-step code, "default" inside the host's code
    that it calls. Counts the regions entered; on the CPU it only counts (the plumbing is checked there)."""

    def __init__(self, device: str) -> None:
        self.cuda = device == "cuda"
        self.entered: Counter = Counter()

    @contextlib.contextmanager
    def mode(self, mode: str, region: str) -> Iterator[None]:
        self.entered[region] += 1
        previous = torch.cuda.get_sync_debug_mode() if self.cuda else None
        if self.cuda:
            torch.cuda.set_sync_debug_mode(mode)
        try:
            yield
        finally:
            if self.cuda:
                torch.cuda.set_sync_debug_mode(previous)

    def strict(self, wrapper, region: str):
        """``wrapper`` (one of the pack's) run under "error"; the executor it calls (the host) under "default"."""
        debug = self

        class HostCode:
            def __init__(self, executor) -> None:
                self._executor = executor

            def __getattr__(self, name: str):
                return getattr(self._executor, name)

            def __call__(self, *args, **kwargs):
                with debug.mode("default", "host"):
                    return self._executor(*args, **kwargs)

        def run(executor, *args, **kwargs):
            with debug.mode("error", region):
                return wrapper(HostCode(executor), *args, **kwargs)

        return run


@pytest.mark.parametrize("with_sega", [False, True], ids=["dype", "dype+sega"])
@pytest.mark.parametrize("device", ["cpu", cuda("cuda", name="cuda")])
def test_no_host_sync_in_our_per_step_code(device, with_sega, monkeypatch):
    """Sampling with split conds (2 model calls per step; 2 ids signatures): every per-step function of ours runs
    with CUDA's sync debug mode at "error", so any host sync in it (a value read, a blocking copy, a small
    host-to-device tensor) raises. The end-of-run read (one transfer, outside the steps) is the run's only one."""
    import comfy.patcher_extension as ext

    wrappers, embedder, config = (_pack(n) for n in ("nodes.rope_patch.wrappers", "nodes.rope_patch.embedder",
                                                   "nodes.rope_patch.config"))
    debug = SyncDebug(device)
    model = dype(tiny_models.build_flux(0, device=device))
    model = (sega(model) if with_sega else model).clone()
    for kind, wrapper in ((ext.WrappersMP.APPLY_MODEL, wrappers.apply_model_wrapper),
                          (ext.WrappersMP.CALC_COND_BATCH, wrappers.calc_cond_batch_wrapper)):
        assert model.wrappers[kind][config.WRAPPER_KEY] == [wrapper]
        model.wrappers[kind][config.WRAPPER_KEY] = [debug.strict(wrapper, kind)]
    real_forward = embedder.ExtrapolatingRopeEmbedder.forward

    def forward(self, ids):
        with debug.mode("error", "embedder"):
            return real_forward(self, ids)

    monkeypatch.setattr(embedder.ExtrapolatingRopeEmbedder, "forward", forward)
    steps = 4
    with counted_gathers() as gathers:
        out = tiny_models.sample(model, "flux", tokens=GRID, steps=steps, cfg=3.0, negative=tiny_models.flux_cond(5, 2),
                                 callback=synced(device))
    assert torch.isfinite(out).all()
    calls = 2 * steps
    assert debug.entered == Counter({ext.WrappersMP.CALC_COND_BATCH: steps, ext.WrappersMP.APPLY_MODEL: calls,
                                     "embedder": calls, "host": steps + calls}), debug.entered
    assert len(gathers) == calls - 2  # the gather path ran under the strict mode too


@contextlib.contextmanager
def kitchen_backend(ck, name: str) -> Iterator[None]:
    """Dispatch comfy-kitchen to backend ``name`` ("host": whatever the host leaves it to choose)."""
    if name == "host":
        yield
        return
    info = ck.list_backends().get(name)
    if info is None or not info["available"]:
        pytest.skip(f"comfy-kitchen's {name} backend is not available here: {info and info['unavailable_reason']}")
    if "apply_rope" not in info["capabilities"]:
        pytest.skip(f"comfy-kitchen's {name} backend has no apply_rope")
    enabled_here = info["disabled"]
    if enabled_here:
        if name == "cuda":
            pytest.skip(f"this host disables comfy-kitchen's CUDA backend for a torch built with CUDA "
                        f"{torch.version.cuda} (it wants 13 or newer); such users get the host's choice, tested too")
        ck.registry.enable(name)  # triton: what the host's --enable-triton-backend does
    try:
        with ck.use_backend(name):
            yield
    finally:
        if enabled_here:
            ck.registry.disable(name)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("backend", ["host", "cuda", "triton"])
def test_comfy_kitchen_apply_rope_on_cuda_reads_our_tables(backend, dtype, record_property):
    """comfy-kitchen's apply_rope on CUDA tensors with a pack-style table (per-sample rows, per-pair temperatures),
    against the host's own eager formula on the CPU. The backend that served the call is recorded (gpu-check's
    summary prints it); a backend that refuses the table's shape (comfy-kitchen then falls back) is a skip."""
    ck = _kitchen()
    import comfy.ldm.flux.math as flux_math

    table = _scaled_per_sample_table()
    gen = torch.Generator().manual_seed(4)
    q, k = (torch.randn(2, 3, table.shape[2], 128, generator=gen).to(DTYPES[dtype]) for _ in range(2))
    want_q, want_k = flux_math._apply_rope1(q, table), flux_math._apply_rope1(k, table)
    args = {"xq": q.cuda(), "xk": k.cuda(), "freqs_cis": table.cuda()}
    with kitchen_backend(ck, backend):
        served = ck.registry.get_capable_backend("apply_rope", args)
        record_property("backend", served)
        if backend != "host" and served != backend:
            pytest.skip(f"comfy-kitchen's {backend} backend refuses this table, so it falls back to {served}")
        got_q, got_k = ck.apply_rope(args["xq"], args["xk"], args["freqs_cis"])
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=2e-2, atol=2e-2)
    assert got_q.dtype == q.dtype and got_q.device.type == "cuda"
    torch.testing.assert_close(got_q.cpu(), want_q, **tolerance)
    torch.testing.assert_close(got_k.cpu(), want_k, **tolerance)
