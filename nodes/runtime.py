"""Per-run, per-step and per-call state, and the three keyed wrappers that create it.

Nothing here is stored on the model, the embedder or module globals. Each wrapper puts its scope in a
``ContextVar`` for exactly the duration of the call it wraps (ComfyUI runs a prompt on one worker thread, and
``ContextVar`` values are per thread), so two clones sampled alternately can never see each other's state.

* OUTER_SAMPLE  → ``RunScope``:  one warning per sampling run; the SEGA fallback flags and the window checks
  (ids_check.py), whatever of them is still on the device read once at the end.
* CALC_COND_BATCH → ``StepScope``: the step's full latent ``x_in``; its spectrum is computed at most once per step,
  however many model calls ComfyUI makes in that step (split conds).
* APPLY_MODEL → ``CallScope``: the live sigma, the token grid, the per-axis frequencies and temperatures that the
  replacement embedder turns into the rotation table.

Newer hosts can run the model calls of one step on worker threads (multi-GPU: ``_calc_cond_batch_multigpu`` and
``MultiGPUThreadPool``), where the main thread's ``ContextVar`` values are not visible. So the step scope (which
points at its run scope) also travels in the ``transformer_options`` of that step's calls, under ``STEP_KEY``:
ComfyUI copies those options into every call, worker threads included. It is a fresh options dict per step, never
the clone's own ``model_options``.

The call scope is read by the embedder *inside* the diffusion model, which ``torch.compile`` may trace, and dynamo
cannot trace ``ContextVar.get`` (a graph break in every model call). So ``CALL`` is a ``threading.local`` slot with
the same ``get/set/reset`` and the same per-thread, per-call lifetime (set and restored around one synchronous call
on the thread that runs it); dynamo reads it as a guarded input.

Exact fast tables (the embedder's window path, see embedder.py) are decided per run and *ids signature* by the
run's ``WindowChecks`` (ids_check.py): the first model call of a signature builds its table with the stock formula
and leaves a device flag saying whether every id was an integer inside the window; the host reads that flag without
waiting (CPU: free; CUDA: a non-blocking copy read once its event has completed) and only later calls of the same
signature gather. Those calls still flag a miss; a miss never ends as a normal result (ids_check.py says how).
"""

from __future__ import annotations

import logging
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace

import torch

from ..rope import axis_frequencies, plain_frequencies, yarn_attention_scale
from .config import PatchConfig, read_config
from .errors import WindowMissError, embedder_swapped_error
from .families import FamilyAdapter, detect_family
from .ids_check import HISTORY_KEY, WindowChecks, ids_signature

logger = logging.getLogger(__name__)


@dataclass
class RunScope:
    warned: set[str] = field(default_factory=set)
    fallback_flags: list[torch.Tensor] = field(default_factory=list)
    # The replacement embedder the sampling clone object-patches in (None when unknown): every model call checks
    # the shared base model still holds it, which is how a swap by another thread shows up.
    expected_embedder: torch.nn.Module | None = None
    patcher: object | None = None  # the sampled clone (ModelPatcher), to tell an unload from another thread's clone
    window: WindowChecks = field(default_factory=WindowChecks)  # the embedder's window verdicts and miss flags

    def warn_once(self, message: str) -> None:
        if message not in self.warned:
            self.warned.add(message)
            logger.warning(message)


@dataclass
class StepScope:
    x_in: torch.Tensor
    sigma: torch.Tensor  # (B,): the step's sigma per sample; ControlNets in this step read it from here
    run: RunScope | None = None  # the run this step belongs to, for calls on threads that cannot see RUN
    spectra: dict = field(default_factory=dict)  # (patch_size, settings) -> LatentSpectrum of x_in
    # (config, embedder, latent shape, device) -> the step's AxisSchedules, one row per sample of x_in: every call of
    # the step (split conds, the rows of a CFG batch) uses them, so schedule and allocation run once per step
    schedules: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one spectrum even when calls run in parallel
    model: object | None = None  # the BaseModel sampled (SEGA "paper" embeds the step's latent with its layer)

    def __deepcopy__(self, memo: dict) -> StepScope:
        return self  # a scope is shared by reference: a copied options dict must still reach the same step


@dataclass(frozen=True)
class AxisSchedule:
    """One spatial axis for one model call: float64 freqs (B, pairs) and an optional temperature (B, pairs)."""

    column: int
    freqs: torch.Tensor
    temperature: torch.Tensor | None


@dataclass(frozen=True)
class CallScope:
    embedder: torch.nn.Module  # the replacement module this call's model holds (guards against foreign calls)
    axes: tuple[AxisSchedule, ...]
    pe_unsqueeze_dim: int = 1  # the family's pe layout (FamilyAdapter.pe_unsqueeze_dim)
    device: torch.device | None = None  # where tables are computed (math_device of the latent's device)
    grid: tuple[int, int] | None = None  # token rows and cols of the generated latent
    batch: int = 1  # rows of the call's latent: tables have at least these rows (axes may have fewer: build_call_scope)
    # The run's verdicts for this call's ids signature (None: outside a run, always the stock formula), and the
    # (key, miss flag) the embedder leaves per table it builds, which apply_model_wrapper files after the call.
    verdicts: dict | None = None
    window_flags: list = field(default_factory=list, compare=False)


def math_device(device: torch.device) -> torch.device:
    """Where schedules and tables are built: ``device``, or the CPU where the host says it has no float64.

    Follows the host's own test, as its ``rope()`` does: ``supports_fp64`` on newer hosts (MPS, Intel XPU,
    DirectML, Iluvatar), the MPS/XPU/DirectML checks of ``flux/math.py`` on 0.3.75.
    """
    import comfy.model_management as mm

    supports_fp64 = getattr(mm, "supports_fp64", None)
    if supports_fp64 is not None:
        no_fp64 = not supports_fp64(device)
    else:
        no_fp64 = mm.is_device_mps(device) or mm.is_intel_xpu() or mm.is_directml_enabled()
    return torch.device("cpu") if no_fp64 else device


class ThreadSlot:
    """``ContextVar``'s ``get/set/reset`` on a ``threading.local``: traceable by dynamo (module docstring)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self):
        return getattr(self._local, "value", None)

    def set(self, value) -> object:
        previous = self.get()
        self._local.value = value
        return previous

    def reset(self, token: object) -> None:
        self._local.value = token


RUN: ContextVar[RunScope | None] = ContextVar("dype_sega_run", default=None)
STEP: ContextVar[StepScope | None] = ContextVar("dype_sega_step", default=None)
CALL = ThreadSlot()  # the CallScope of the model call running on this thread
STEP_KEY = "dype_sega_step"  # transformer_options key carrying the StepScope to calls on other threads


def _current_step(transformer_options: dict | None) -> StepScope | None:
    step = STEP.get()
    if step is None and transformer_options is not None:
        value = transformer_options.get(STEP_KEY)
        step = value if isinstance(value, StepScope) else None
    return step


def _current_run(step: StepScope | None) -> RunScope | None:
    run = RUN.get()
    return run if run is not None or step is None else step.run


def _warn(message: str, run: RunScope | None = None) -> None:
    run = run or RUN.get()
    if run is not None:
        run.warn_once(message)
    else:
        logger.warning(message)


def outer_sample_wrapper(executor, *args, **kwargs):
    """Open a run scope; let ControlNets follow the schedule; after sampling, report SEGA fallbacks once."""
    from .controlnet import scheduled_controlnets

    guider = getattr(executor, "class_obj", None)
    patcher = getattr(guider, "model_patcher", None)
    config = read_config((getattr(guider, "model_options", None) or {}).get("transformer_options", {}))
    run = RunScope()
    adapter = None
    if patcher is not None and config is not None:
        adapter = detect_family(patcher.model)
        run.expected_embedder = patcher.object_patches.get(adapter.embedder_attr)
        run.patcher = patcher
        options = guider.model_options.get("transformer_options", {})
        run.window = WindowChecks(history=options.get(HISTORY_KEY), model_name=type(patcher.model).__name__,
                                  options=options)
    token = RUN.set(run)
    failure = None
    try:
        with scheduled_controlnets(getattr(guider, "conds", None), config, adapter, run):
            return executor(*args, **kwargs)
    except BaseException as error:
        failure = error
        raise
    finally:
        RUN.reset(token)
        _report_run(run, failure)


def _report_run(run: RunScope, failure: BaseException | None = None) -> None:
    """Read the run's device flags in one host transfer: the only blocking host read of a run. A gathered table
    that missed stops a finished run (its result is not exact); a run already failing keeps its own error."""
    misses = [flag.device_flag for flag in run.window.pending]
    groups = (run.fallback_flags, misses)
    if not any(groups):
        return
    device = next(flags[0].device for flags in groups if flags)

    def count(flags: list[torch.Tensor]) -> torch.Tensor:
        if not flags:
            return torch.zeros((), dtype=torch.int64, device=device)
        return torch.stack([flag.any().to(device) for flag in flags]).sum()

    sega_fell_back, window_misses = torch.stack([count(flags) for flags in groups]).tolist()
    if sega_fell_back:
        logger.warning(
            "SEGA: the latent was constant or non-finite at some steps; those steps used the reference "
            "temperature m_ref for every pair (the model never saw NaN)."
        )
    if window_misses and failure is None:
        run.window.fail(window_misses)  # raises WindowMissError instead of returning an inexact result
    if window_misses:
        if run.window.history is not None:
            run.window.history.moved = True
        if not isinstance(failure, WindowMissError):
            logger.error("DyPE/SEGA: %d model call(s) of this failed run gathered RoPE tables from moved ids; this "
                         "model now builds every table with the stock formula.", window_misses)


def calc_cond_batch_wrapper(executor, model, conds, x_in, timestep, model_options):
    """Open a step scope holding the step's full latent, so the spectrum is computed once per step."""
    step = StepScope(x_in=x_in, sigma=timestep, run=RUN.get(), model=model)
    options = dict(model_options)  # the step's own copy: the clone's model_options are never written
    options["transformer_options"] = {**model_options.get("transformer_options", {}), STEP_KEY: step}
    token = STEP.set(step)
    try:
        return executor(model, conds, x_in, timestep, options)
    finally:
        STEP.reset(token)


def _compute_spectrum(latent: torch.Tensor, sigma: torch.Tensor, adapter: FamilyAdapter, settings,
                      base_model) -> object:
    """The spectrum ``settings.recipe`` asks for (spectral/recipes.py) of ``latent``."""
    from ..spectral import latent_spectrum, recipe_rules, token_map_spectrum
    from .token_maps import embedded_token_map, packed_token_map

    rules = recipe_rules(settings.recipe)
    if rules.spectrum == "latent":
        return latent_spectrum(latent, adapter.patch_size, settings)
    if rules.spectrum == "embedding" and base_model is None:
        raise ValueError("SEGA recipe 'paper' takes its spectrum through the model's patch embedding: pass the "
                         "model (build_call_scope(base_model=...)) or sample inside a sampler step.")
    with torch.no_grad():  # both reference codes compute their spectra without a gradient
        if rules.spectrum == "embedding":
            token_map = embedded_token_map(base_model, adapter, latent, sigma)
        else:
            token_map = packed_token_map(base_model, adapter, latent, sigma)
        return token_map_spectrum(token_map, settings, per_sample=rules.per_sample)


def _latent_spectrum(x: torch.Tensor, sigma: torch.Tensor, adapter: FamilyAdapter, settings, step: StepScope | None,
                     base_model=None):
    """The spectrum for the rows of this call, reusing the step's when the call holds the step's samples."""
    model = base_model if base_model is not None else (step.model if step is not None else None)
    if step is None or step.x_in.shape[1:] != x.shape[1:] or x.shape[0] % step.x_in.shape[0]:
        return _compute_spectrum(x, sigma, adapter, settings, model)  # outside a sampler step, or area-cropped
    key = (adapter.patch_size, settings)
    with step.lock:
        spectrum = step.spectra.get(key)
        if spectrum is None:
            sigma_in = step.sigma if step.sigma.numel() == step.x_in.shape[0] else sigma.reshape(-1)[:1]
            spectrum = step.spectra[key] = _compute_spectrum(step.x_in.to(x.device), sigma_in.to(x.device), adapter,
                                                              settings, model)
    if spectrum.valid.device != x.device:  # a worker thread on another device
        spectrum = replace(spectrum, **{f.name: getattr(spectrum, f.name).to(x.device) for f in fields(spectrum)})
    repeats = x.shape[0] // step.x_in.shape[0]
    if repeats == 1 or spectrum.valid.shape[0] != step.x_in.shape[0] or step.x_in.shape[0] == 1:
        return spectrum  # one row (the batch's spectrum, or one sample) broadcasts over the call's rows
    # calc_cond_batch concatenates one full copy of x_in per cond, in order: row j is sample j mod B.
    per_sample = ("axis_h", "axis_w", "radial", "spread", "valid")
    return replace(spectrum, **{name: _repeat_rows(getattr(spectrum, name), repeats) for name in per_sample})


def _repeat_rows(value: torch.Tensor, repeats: int) -> torch.Tensor:
    return value.repeat(repeats, *([1] * (value.dim() - 1)))


def build_call_scope(
    config: PatchConfig,
    adapter: FamilyAdapter,
    embedder: torch.nn.Module,
    x: torch.Tensor,
    sigma: torch.Tensor,
    step: StepScope | None = None,
    verdicts: dict | None = None,
    base_model=None,
) -> CallScope | None:
    """The schedule for one model call, or None when nothing is above the trained grid (exact stock behaviour).

    Inside a sampler step, for a call whose rows are whole copies of the step's samples (calc_cond_batch
    concatenates one copy per cond: row j is sample j mod B), the schedule is the step's, built once on the first
    B rows and shared: its AxisSchedules then have B rows, which the embedder maps onto the call's rows.
    ``base_model`` is the BaseModel being sampled (SEGA's "paper" spectrum embeds the latent with its layer; inside
    a step the step's model is used).
    """
    from .axis_plan import plan_call

    grid = adapter.token_grid(x)
    plans = plan_call(config, adapter, grid)
    if plans is None:
        return None
    device = math_device(x.device)
    scope = dict(embedder=embedder, pe_unsqueeze_dim=adapter.pe_unsqueeze_dim, device=device, grid=grid,
                 batch=x.shape[0], verdicts=verdicts)
    samples = None if step is None else step.x_in.shape[0]
    if samples is None or step.x_in.shape[1:] != x.shape[1:] or x.shape[0] % samples or sigma.numel() != x.shape[0]:
        axes = _axis_schedules(config, adapter, embedder, x, sigma, plans, step, base_model)
        return CallScope(axes=axes, **scope)
    key = (config, embedder, tuple(x.shape[1:]), x.device)
    axes = step.schedules.get(key)
    if axes is None:  # two threads may both build it (same values); the first one stored is kept
        axes = _axis_schedules(config, adapter, embedder, x[:samples], sigma.reshape(-1)[:samples], plans, step,
                               base_model)
        axes = step.schedules.setdefault(key, axes)
    return CallScope(axes=axes, **scope)


#: The reference codes switch SEGA off where m_ref does not exceed 1 (their ``base_mscale > 1 + 1e-8``).
_REFERENCE_MIN_M_REF = 1.0 + 1e-8


def _axis_schedules(config: PatchConfig, adapter: FamilyAdapter, embedder: torch.nn.Module, x: torch.Tensor,
                    sigma: torch.Tensor, plans: tuple, step: StepScope | None,
                    base_model=None) -> tuple[AxisSchedule, ...]:
    """Frequencies (and SEGA's or YaRN's temperatures) of each spatial axis for the rows of ``x``."""
    from ..rope import ntk_frequencies
    from ..spectral import axis_temperatures, reference_temperature

    positions = config.effective_positions
    theta = float(embedder.theta)
    device = math_device(x.device)
    t = sigma.detach().to(device=device, dtype=torch.float64).reshape(-1)  # flow time = sigma, clamped in rope/

    spectrum = None
    sega = config.sega
    if sega is not None:
        spectrum = _latent_spectrum(x, sigma, adapter, sega, step, base_model)
        run = _current_run(step)
        if run is not None:
            run.fallback_flags.append(~spectrum.valid)
        if device != x.device:
            spectrum = replace(spectrum, **{f.name: getattr(spectrum, f.name).to(device) for f in fields(spectrum)})

    freqs_per_axis, temperatures = [], []
    for plan, band_key in zip(plans, ("h", "w"), strict=True):
        dim = embedder.axes_dim[plan.column]
        if not plan.rescaled:
            freqs_per_axis.append(plain_frequencies(dim, theta, device)[None])
            temperatures.append(None)
            continue
        if plan.ntk_factor is not None:
            freqs = ntk_frequencies(dim, theta, plan.ntk_factor, device)[None]
        else:
            freqs = axis_frequencies(positions, dim, theta, plan.scale, plan.base_tokens, t)
        temperature = None
        if sega is not None:
            m_ref = reference_temperature(plan.m_ref_scale, sega.kappa, sega.m_ref)
            if sega.recipe == "refined" or m_ref > _REFERENCE_MIN_M_REF:
                temperature = axis_temperatures(
                    freqs,
                    getattr(spectrum, f"band_{band_key}"),
                    getattr(spectrum, f"axis_{band_key}"),
                    spectrum.spread,
                    plan.m_ref_scale,
                    sega,
                    spectrum.valid,
                )
        elif positions.method == "yarn":
            temperature = torch.full((1, dim // 2), yarn_attention_scale(plan.scale), dtype=torch.float64,
                                     device=device)
        freqs_per_axis.append(freqs)
        temperatures.append(temperature)
    return tuple(
        AxisSchedule(plan.column, freqs, temperatures[plan.temperature_axis] if plan.rescaled else None)
        for plan, freqs in zip(plans, freqs_per_axis, strict=True)
    )


def apply_model_wrapper(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None,
                        **kwargs):
    """Feed the live sigma and the latent's grid to the replacement embedder for the duration of one model call."""
    config = read_config(transformer_options or {})
    scope = None
    if config is not None:
        step = _current_step(transformer_options)
        import comfy.utils

        from .embedder import ExtrapolatingRopeEmbedder

        base_model = executor.class_obj
        adapter = detect_family(base_model)
        embedder = comfy.utils.get_attr(base_model, adapter.embedder_attr)
        run = _current_run(step)
        if run is not None and run.expected_embedder is not None and embedder is not run.expected_embedder:
            raise embedder_swapped_error(base_model, adapter.embedder_attr, embedder, run.expected_embedder,
                                         run.patcher)
        if isinstance(embedder, ExtrapolatingRopeEmbedder):
            verdicts = None
            if run is not None:
                run.window.poll()  # a gathered table of an earlier call that missed stops the run here
                signature = ids_signature(x, c_concat, c_crossattn, transformer_options or {}, kwargs)
                verdicts = run.window.verdicts(signature)
            scope = build_call_scope(config, adapter, embedder, x, t, step, verdicts, base_model)
        else:
            _warn(
                f"DyPE/SEGA: {adapter.embedder_attr} of {type(base_model).__name__} is "
                f"{type(embedder).__module__}.{type(embedder).__name__}: a node applied after DyPE/SEGA replaced "
                "our embedder with its own, so this model samples with that node's RoPE and without DyPE/SEGA. "
                "Two RoPE replacements cannot both apply: remove one of them.",
                _current_run(step),
            )
    token = CALL.set(scope)
    try:
        out = executor(x, t, c_concat, c_crossattn, control, transformer_options, **kwargs)
    finally:
        CALL.reset(token)
    run = _current_run(_current_step(transformer_options))
    if scope is not None and scope.verdicts is not None and run is not None:
        run.window.file(scope.window_flags, scope.verdicts)
    return out
