"""Per-run, per-step and per-call state, and where each lives while its wrapper runs (wrappers.py opens them).

Nothing here is stored on the model, the embedder or module globals. Each wrapper puts its scope in a
``ContextVar`` for exactly the duration of the call it wraps (ComfyUI runs a prompt on one worker thread, and
``ContextVar`` values are per thread), so two clones sampled alternately can never see each other's state.

* OUTER_SAMPLE  → ``RunScope``:  one warning per sampling run; the SEGA fallback flags, read once at the end.
* CALC_COND_BATCH → ``StepScope``: the step's full latent ``x_in``; its spectrum is computed at most once per step,
  however many model calls ComfyUI makes in that step (split conds).
* APPLY_MODEL → ``CallScope``: the per-axis frequencies and temperatures of this call (from its sigma and token
  grid) that the replacement embedder turns into the rotation table.

Newer hosts can run the model calls of one step on worker threads (multi-GPU: ``_calc_cond_batch_multigpu`` and
``MultiGPUThreadPool``), where the main thread's ``ContextVar`` values are not visible. So the step scope (which
points at its run scope) also travels in the ``transformer_options`` of that step's calls, under ``STEP_KEY``:
ComfyUI copies those options into every call, worker threads included. It is a fresh options dict per step, never
the clone's own ``model_options``.

The call scope is read by the embedder *inside* the diffusion model, which ``torch.compile`` may trace, and dynamo
cannot trace ``ContextVar.get`` (a graph break in every model call). So ``CALL`` is a ``threading.local`` slot with
the same ``get/set/reset`` and the same per-thread, per-call lifetime (set and restored around one synchronous call
on the thread that runs it); dynamo reads it as a guarded input.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import torch

from ..families.base import PER_SAMPLE

logger = logging.getLogger(__name__)


@dataclass
class RunScope:
    warned: set[str] = field(default_factory=set)
    fallback_flags: list[torch.Tensor] = field(default_factory=list)
    # The replacement embedder the sampling clone object-patches in (None when unknown): every model call checks
    # the shared base model still holds it, which is how a swap by another thread shows up.
    expected_embedder: torch.nn.Module | None = None
    patcher: object | None = None  # the sampled clone (ModelPatcher), to tell an unload from another thread's clone

    def warn_once(self, message: str) -> None:
        if message not in self.warned:
            self.warned.add(message)
            logger.warning(message)

    def note_once(self, message: str) -> None:
        """An informational line, once per run (what the run does differently and why, not a problem)."""
        if message not in self.warned:
            self.warned.add(message)
            logger.info(message)


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
    math_device: torch.device | None = None  # where the call's float64 is made (devices.math_device of the latent's)
    batch: int = 1  # rows of the call's latent: tables have at least these rows (axes may have fewer: build_call_scope)
    table_batch: str = PER_SAMPLE  # FamilyAdapter.table_batch: one table per sample, one per batch, or either
    family: str = ""  # the family's display name, for the errors a table can raise


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

    @contextmanager
    def holding(self, value) -> Iterator[None]:
        """``value`` in the slot for the ``with`` block, the previous value back after it, whatever happens."""
        token = self.set(value)
        try:
            yield
        finally:
            self.reset(token)


RUN: ContextVar[RunScope | None] = ContextVar("dype_sega_run", default=None)
STEP: ContextVar[StepScope | None] = ContextVar("dype_sega_step", default=None)
CALL = ThreadSlot()  # the CallScope of the model call running on this thread
STEP_KEY = "dype_sega_step"  # transformer_options key carrying the StepScope to calls on other threads


def current_step(transformer_options: dict | None) -> StepScope | None:
    """The step of this model call: this thread's, else the one its options carry (a worker thread's call)."""
    step = STEP.get()
    if step is None and transformer_options is not None:
        value = transformer_options.get(STEP_KEY)
        step = value if isinstance(value, StepScope) else None
    return step


def current_run(step: StepScope | None) -> RunScope | None:
    """The run of this model call: this thread's, else the run of its step."""
    run = RUN.get()
    return run if run is not None or step is None else step.run


def warn(message: str, run: RunScope | None = None) -> None:
    """Once per run inside a run, else every time."""
    run = run or RUN.get()
    if run is not None:
        run.warn_once(message)
    else:
        logger.warning(message)
