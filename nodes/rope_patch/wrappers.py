"""The three keyed wrappers a patched clone carries (clone.py adds them), each opening one scope (scopes.py) for
exactly the call it wraps:

* OUTER_SAMPLE (``outer_sample_wrapper``): the run scope; ControlNets follow the schedule for the run
  (controlnet.py); at the end, SEGA's fallback flags are read in one transfer (``_report_run``).
* CALC_COND_BATCH (``calc_cond_batch_wrapper``): the step scope, holding the step's full latent.
* APPLY_MODEL (``apply_model_wrapper``): the call scope, the schedule of this model call (schedule.py) that the
  replacement embedder reads; a model that reuses text keys across steps recomputes them in such calls
  (prefix_cache.py).
"""

from __future__ import annotations

import logging

import torch

from ..families import detect_family
from .config import read_config
from .controlnet import scheduled_controlnets
from .embedder import ExtrapolatingRopeEmbedder
from .errors import embedder_swapped_error
from .prefix_cache import per_step_options
from .schedule import build_call_scope
from .scopes import CALL, RUN, STEP, STEP_KEY, RunScope, StepScope, current_run, current_step, warn
from .spa import SpaEmbedder

logger = logging.getLogger(__name__)


def outer_sample_wrapper(executor, *args, **kwargs):
    """Open a run scope; let ControlNets follow the schedule; after sampling, report SEGA fallbacks once."""
    guider = getattr(executor, "class_obj", None)
    patcher = getattr(guider, "model_patcher", None)
    config = read_config((getattr(guider, "model_options", None) or {}).get("transformer_options", {}))
    run = RunScope()
    adapter = None
    if patcher is not None and config is not None:
        adapter = detect_family(patcher.model)
        run.expected_embedder = patcher.object_patches.get(adapter.embedder_attr)
        run.patcher = patcher
    token = RUN.set(run)
    try:
        with scheduled_controlnets(getattr(guider, "conds", None), config, adapter, run):
            return executor(*args, **kwargs)
    finally:
        RUN.reset(token)
        _report_run(run)


def _report_run(run: RunScope) -> None:
    """Read SEGA's fallback flags in one host transfer: the only blocking host read of a run on a device with
    float64 (without, the schedules and tables are built on the CPU: docs/ARCHITECTURE.md)."""
    if not run.fallback_flags:
        return
    device = run.fallback_flags[0].device
    if torch.stack([flag.any().to(device) for flag in run.fallback_flags]).any().item():
        logger.warning(
            "SEGA: the latent was constant or non-finite at some steps; those steps used the reference "
            "temperature m_ref for every pair (the model never saw NaN)."
        )


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


def apply_model_wrapper(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None,
                        **kwargs):
    """Feed the live sigma and the latent's grid to the replacement embedder for the duration of one model call."""
    config = read_config(transformer_options or {})
    scope = None
    if config is not None:
        step = current_step(transformer_options)
        import comfy.utils

        base_model = executor.class_obj
        adapter = detect_family(base_model)
        embedder = comfy.utils.get_attr(base_model, adapter.embedder_attr)
        run = current_run(step)
        if run is not None and run.expected_embedder is not None and embedder is not run.expected_embedder:
            raise embedder_swapped_error(base_model, adapter.embedder_attr, embedder, run.expected_embedder,
                                         run.patcher)
        if isinstance(embedder, SpaEmbedder):  # an HRDiT stage clone's SPA embedder holds ours (spa.py)
            embedder = embedder.inner
        if isinstance(embedder, ExtrapolatingRopeEmbedder):
            scope = build_call_scope(config, adapter, embedder, x, t, step, base_model)
            if scope is not None:  # a table of our own: a cache of keys across steps must not keep the old ones
                transformer_options = per_step_options(transformer_options, adapter, base_model, config, run)
        else:
            warn(
                f"DyPE/SEGA: {adapter.embedder_attr} of {type(base_model).__name__} is "
                f"{type(embedder).__module__}.{type(embedder).__name__}: a node applied after DyPE/SEGA replaced "
                "our embedder with its own, so this model samples with that node's RoPE and without DyPE/SEGA. "
                "Two RoPE replacements cannot both apply: remove one of them.",
                current_run(step),
            )
    with CALL.holding(scope):
        return executor(x, t, c_concat, c_crossattn, control, transformer_options, **kwargs)
