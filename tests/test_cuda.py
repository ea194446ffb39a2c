"""What only a GPU can check, each test beside its CPU twin (the same code on device "cpu", run by every suite, so the
CUDA variant's own logic is tested wherever the suite runs). The CUDA variants (marker ``cuda``) run in
scripts/gpu-check.sh on both hosts, with the host booted on the GPU as users run it; elsewhere they are skipped with
the reason (conftest.py).

* Sampling on the device (Flux and Qwen-Image, fp32/bf16/fp16 weights and fp8 cast to bf16 at use, DyPE + SEGA;
  on the CPU the whole dtype matrix: test_weight_dtypes*.py): tables on the device, float32,
  contiguous, schedules float64 on the device, the same table as the CPU's for the same first call.
* bf16/fp16 ids straight into the embedder: the table is rope/'s formula on those ids.
* No host sync from our per-step code: CUDA's sync debug mode is "error" inside every per-step function of ours
  (the step and model-call wrappers, the embedder) and "default" inside the host's code they call.
* comfy-kitchen's apply_rope (0.30) on CUDA tensors with our per-sample scaled tables, per backend.
* Qwen-Image 2.1's fused rms_rope on CUDA with one table or one per sample (CPU twin: test_qwen_image21_kernel.py).
* HRDiT's HAP kernel on CUDA: the compiled FlexAttention on the kept entries (CPU twin: test_hrdit_math.py); at
  FLUX.1's 2048² and 4096² attention with and without triton, peak memory bounded (tests/hap_flux_shapes.py); its
  block mask built on the GPU equals create_block_mask there (test_hap_block_mask.py).
* The host's check saying "no float64" for the GPU (as on MPS / XPU / DirectML): schedules on the CPU, the table on
  the device, the float64-on-device run's table (CPU twin: the cpu case; every node: test_no_float64.py).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

import pytest
import tiny_models
import torch
from capture import capture, formula_table
from hap_flux_shapes import check_hap_at_flux_shape
from no_float64 import host_says_no_float64
from patching import _pack, dype
from test_hap_block_mask import check_block_mask_on
from test_hrdit_math import _kernel_error as hap_kernel_error
from test_qwen_image21_kernel import _check as check_rms_rope
from test_sega_host import sega
from test_worker_threads_and_devices import _kitchen, _scaled_per_sample_table

pytestmark = pytest.mark.usefixtures("comfy_host")

GRID = (32, 24)  # tokens: above the tiny models' trained 8-token grid (test_embedder_tables.py)
FAMILIES = ("flux", "qwen_image")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
#: (stored, compute) weights: DTYPES, and fp8 cast to bf16 at use as ComfyUI runs fp8 checkpoints (weight_dtypes.py)
WEIGHTS = {**{name: (dtype, None) for name, dtype in DTYPES.items()}, "fp8-bf16": (torch.float8_e4m3fn, torch.bfloat16)}


def cuda(*values, name: str):
    """A parameter set that needs CUDA (marker ``cuda``)."""
    return pytest.param(*values, marks=pytest.mark.cuda, id=name)


SAMPLING_CASES = [pytest.param("cpu", f, "float32", id=f"cpu-{f}-float32") for f in FAMILIES] + [
    cuda("cuda", f, d, name=f"cuda-{f}-{d}") for f in FAMILIES for d in WEIGHTS]


@pytest.mark.parametrize(("device", "family", "dtype"), SAMPLING_CASES)
def test_tables_and_schedules_on_the_device(device, family, dtype, monkeypatch):
    wrappers = _pack("nodes.rope_patch.wrappers")
    scopes = []
    real_scope = wrappers.build_call_scope

    def build_scope(*args, **kwargs):
        scopes.append(real_scope(*args, **kwargs))
        return scopes[-1]

    monkeypatch.setattr(wrappers, "build_call_scope", build_scope)
    fam = tiny_models.FAMILIES[family]
    stored, compute = WEIGHTS[dtype]
    model = sega(dype(tiny_models.build(family, 0, device=device, dtype=stored, compute=compute)))
    steps, negative = 4, fam.cond(7, 2)  # as long as the positive: one CFG batch of 2 rows per step
    with capture(model) as (clone, calls):
        out = tiny_models.sample(clone, family, tokens=GRID, steps=steps, cfg=3.0, negative=negative)
    assert len(calls) == steps and torch.isfinite(out).all()
    for call in calls:
        ((ids, table),) = call.tables
        assert table.device.type == device and table.dtype == torch.float32 and table.is_contiguous()
    assert scopes and all(axis.freqs.dtype == torch.float64 and axis.freqs.device.type == device
                          for scope in scopes for axis in scope.axes)
    if device == "cuda" and dtype == "float32":  # the same first call on the CPU: the same schedule and table
        with capture(sega(dype(tiny_models.build(family, 0)))) as (clone, cpu_calls):
            tiny_models.sample(clone, family, tokens=GRID, steps=1, cfg=3.0, negative=negative)
        # SEGA's FFT is float32 (cuFFT vs pocketfft): temperatures agree to ~1e-6; a wrong schedule is off by >1e-2
        torch.testing.assert_close(calls[0].tables[0][1].cpu(), cpu_calls[0].tables[0][1], rtol=0, atol=1e-4)


@pytest.mark.parametrize("device", ["cpu", cuda("cuda", name="cuda")])
def test_a_device_without_float64_gets_its_schedules_from_the_cpu(device, monkeypatch):
    wrappers = _pack("nodes.rope_patch.wrappers")
    real_scope, scopes = wrappers.build_call_scope, []
    monkeypatch.setattr(wrappers, "build_call_scope", lambda *a, **k: scopes.append(real_scope(*a, **k)) or scopes[-1])
    model, negative = tiny_models.build("flux", 0, device=device), tiny_models.flux_cond(7, 2)
    runs = []
    for forced in (False, True):
        if forced:
            host_says_no_float64(monkeypatch)
        with capture(sega(dype(model))) as (clone, calls):
            tiny_models.sample(clone, "flux", tokens=GRID, steps=1, cfg=3.0, negative=negative)
        runs.append(calls[0].tables[0][1])
    assert runs[1].device.type == device and runs[1].dtype == torch.float32
    assert all(axis.freqs.device.type == "cpu" for axis in scopes[-1].axes)
    # SEGA's float32 FFT runs on the device in both runs; its bands and the tables in float64, on the device or the CPU
    torch.testing.assert_close(runs[1], runs[0], rtol=0, atol=1e-6)


@pytest.mark.parametrize(("device", "dtype"), [pytest.param("cpu", d, id=f"cpu-{d}") for d in DTYPES]
                         + [cuda("cuda", d, name=f"cuda-{d}") for d in DTYPES])
def test_half_precision_ids_get_the_formula(device, dtype):
    """Ids in bf16/fp16 (a node may pass them so; bf16 holds integers exactly only up to 256, beyond which they round
    to other integers): the table is rope/'s formula on those ids."""
    schedule, scopes, families, config, rope = (_pack(n) for n in (
        "nodes.rope_patch.schedule", "nodes.rope_patch.scopes", "nodes.families", "nodes.rope_patch.config", "rope"))
    model = sega(dype(tiny_models.build_flux(0)))
    ours = model.get_model_object("diffusion_model.pe_embedder")
    settings = config.read_config(model.model_options["transformer_options"])
    rows, cols, text = 320, 16, 7
    grid = torch.stack(torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij"), -1).reshape(-1, 2)
    ids = torch.cat([torch.zeros(text, 3), torch.cat([torch.zeros(rows * cols, 1), grid], -1)])[None]
    ids = ids.to(device=device, dtype=DTYPES[dtype])
    x = torch.randn(1, 16, 2 * rows, 2 * cols, generator=torch.Generator().manual_seed(0)).to(device)
    with torch.no_grad():
        scope = schedule.build_call_scope(settings, families.FLUX, ours, x, torch.tensor([0.7], device=device))
        with scopes.CALL.holding(scope):
            table = ours(ids)
        expected = formula_table(rope, ours, scope, ids)
    assert table.device.type == device and torch.equal(table, expected)
    if dtype == "bfloat16":
        assert ids[0, text:, 1].unique().numel() < rows  # the premise: bf16 rounded some rows together


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
    """Sampling with split conds (2 model calls per step): every per-step function of ours runs
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
    out = tiny_models.sample(model, "flux", tokens=GRID, steps=steps, cfg=3.0, negative=tiny_models.flux_cond(5, 2),
                             callback=lambda *_: torch.cuda.synchronize() if device == "cuda" else None)
    assert torch.isfinite(out).all()
    calls = 2 * steps
    assert debug.entered == Counter({ext.WrappersMP.CALC_COND_BATCH: steps, ext.WrappersMP.APPLY_MODEL: calls,
                                     "embedder": calls, "host": steps + calls}), debug.entered


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


@pytest.mark.cuda
@pytest.mark.parametrize("backend", ["host", "cuda", "triton"])
@pytest.mark.parametrize("rows", [1, 2])
def test_rms_rope_on_cuda_takes_one_table_or_one_per_sample(rows, backend):
    """The fused kernel 2.1 runs (bf16, CUDA): per-row tables must be read per row, not row 0 for all."""
    ck = _kitchen()
    with kitchen_backend(ck, backend):
        check_rms_rope("cuda", rows, torch.bfloat16, dict(rtol=2e-2, atol=2e-2))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype,tolerance", [(torch.float32, 2e-5), (torch.bfloat16, 3e-2)])
def test_hap_kernel_on_cuda_is_compiled_flex_attention_on_the_kept_entries(dtype, tolerance):
    """test_hrdit_math.py's test_hap_kernel_through_its_plan_on_the_cpu on CUDA: the compiled FlexAttention."""
    assert hap_kernel_error("cuda", dtype, None) < tolerance


HAP_CASES = [pytest.param("cpu", 256, torch.float32, 128.0, t, id=f"cpu-256-triton-{t}") for t in (True, False)] + [
    cuda("cuda", side, torch.bfloat16, 2048.0, t, name=f"cuda-{side}-triton-{t}") for side in (2048, 4096)
    for t in (True, False)]


@pytest.mark.parametrize(("device", "side", "dtype", "alpha", "triton"), HAP_CASES)
def test_hap_at_flux_shapes_with_and_without_triton(device, side, dtype, alpha, triton, monkeypatch):
    """HAP at FLUX.1's attention (24 heads, dim 128; on CUDA the shipped plan in bf16): without triton (as
    Windows portable ComfyUI) the blockwise path, with it on CUDA the compiled FlexAttention; rows checked against
    the official mask, peak memory bounded; skipped where torch finds no triton (tests/hap_flux_shapes.py)."""
    check_hap_at_flux_shape(device, side, dtype, alpha, triton, monkeypatch)


@pytest.mark.parametrize("device", ["cpu", cuda("cuda", name="cuda")])
def test_hap_block_mask_on_the_device_is_create_block_mask(device):
    check_block_mask_on(device)
