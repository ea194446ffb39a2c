"""A clone whose attention follows an ``AttentionPlan`` (SPA's variants, a kernel such as HAP's): what HRDiT's
stages sample with. The input MODEL is untouched; the plan, the override and the wrapper live on the clone.

The clone gets: SPA's embedder in front of whatever embedder the model holds (only when the plan has SPA), the
attention override (spa_attention.py) chained onto the model's own, and three keyed wrappers. The step a model
call belongs to is what a cascade's stage sampler tells it (stage_step.py); under any other sampler it is counted:
OUTER_SAMPLE opens a counter for the sampling run, each CALC_COND_BATCH (one evaluation of the model per step, as
Euler samplers make) hands its index to its calls in their options and counts one. APPLY_MODEL opens the call's
``AttentionCall`` (the token grid from the latent's shape, SPA on or off at that step, the model and the run's
notes) and keeps our override on top: a node that sets its own after this clone (the Model Attention Backend node's
``set_model_optimized_attention``: whoever writes last wins) is chained under ours for that call, as if it had
been set before the clone, and the run says so once. Ours must be on top where SPA is on: q and k reach the
attention unrotated, which only our override can attend. A host without an attention override is refused by name.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..families import FamilyAdapter, UnsupportedModelError
from ..families.base import COSMOS_ROPE
from .attention_backend import block_preferences, override_name
from .reload import add_reload
from .spa import ATTENTION, ATTENTION_KEY, RUN_NOTES_KEY, RUN_STEP_KEY, AttentionCall, AttentionPlan, Notes, SpaEmbedder
from .spa_attention import chained_override, host_can_override_attention
from .stage_step import stage_step

logger = logging.getLogger(__name__)

OVERRIDE_KEY = "optimized_attention_override"  # ComfyUI's key (comfy.ldm.modules.attention.wrap_attn)


@dataclass
class _Run:
    step: int = 0  # the next evaluation's index
    notes: Notes = field(default_factory=Notes)


_RUN: ContextVar[_Run | None] = ContextVar("dype_sega_attention_run", default=None)


def run_wrapper(executor, *args, **kwargs):
    """One sampling run: its evaluations are counted from 0; its notes are logged once."""
    token = _RUN.set(_Run())
    try:
        return executor(*args, **kwargs)
    finally:
        _RUN.reset(token)


def step_wrapper(executor, model, conds, x_in, timestep, model_options):
    """One evaluation of the model (a step): its index and the run's notes travel to its calls in a copy of the
    options (worker threads included)."""
    run = _RUN.get()
    options = dict(model_options)
    options["transformer_options"] = {**model_options.get("transformer_options", {}),
                                      RUN_STEP_KEY: run.step if run is not None else 0}
    if run is not None:
        options["transformer_options"][RUN_NOTES_KEY] = run.notes
    try:
        return executor(model, conds, x_in, timestep, options)
    finally:
        if run is not None:
            run.step += 1


def _on_top(transformer_options: dict, call: AttentionCall) -> dict:
    """The call's options with our override on top (module docstring): as they are where it is, else a copy."""
    current = transformer_options.get(OVERRIDE_KEY)
    if getattr(current, "dype_sega_attention", False):
        return transformer_options
    if current is None:
        call.notes.once("HRDiT: the stage model's attention override was removed after HRDiT's clone; SPA and HAP "
                        "are put back on top of ComfyUI's attention.")
    else:
        call.notes.once(f"HRDiT: the stage model's attention override was replaced after HRDiT's clone by "
                        f"{override_name(current)}; SPA and HAP run on top of it, and it attends for them.")
    return {**transformer_options, OVERRIDE_KEY: chained_override(current)}


def attention_wrapper(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None,
                      **kwargs):
    """Open this call's AttentionCall: the plan, SPA on or off at the stage's step, the latent's token grid."""
    plan = (transformer_options or {}).get(ATTENTION_KEY)
    call = None
    if isinstance(plan, AttentionPlan):
        from ..families import detect_family

        base_model = executor.class_obj
        adapter = detect_family(base_model)
        blocks = len(getattr(base_model.diffusion_model, "double_blocks", ()))
        told = stage_step(transformer_options)  # a cascade's stage sampler tells it; elsewhere it is counted
        step = told.step if told is not None else int(transformer_options.get(RUN_STEP_KEY, 0))
        notes = transformer_options.get(RUN_NOTES_KEY)
        call = AttentionCall(plan=plan, spa_on=plan.spa_on(step), grid=adapter.token_grid(x), double_blocks=blocks,
                             notes=notes if isinstance(notes, Notes) else Notes())
        transformer_options = _on_top(transformer_options, call)
        if getattr(transformer_options[OVERRIDE_KEY], "previous", None) is None:
            call.preferred = block_preferences(base_model.diffusion_model, call.notes)
    with ATTENTION.holding(call):
        return executor(x, t, c_concat, c_crossattn, control, transformer_options, **kwargs)


def attention_clone(model, adapter: FamilyAdapter, plan: AttentionPlan, what: str = "HRDiT"):
    """A clone of ``model`` sampling with ``plan``; ``what`` names the method in errors."""
    import comfy.patcher_extension as ext

    missing = host_can_override_attention()
    if missing:
        raise UnsupportedModelError(f"{what}: SPA and HAP replace the model's attention, which needs {missing}. "
                                    "Update ComfyUI, or run the cascade without SPA and HAP.")
    if adapter.embedder_kind == COSMOS_ROPE:
        raise UnsupportedModelError(f"{what}: SPA needs an ids-based rotary embedder; {adapter.display_name} builds "
                                    "its table from the latent's shape.")
    clone = model.clone()
    if plan.spa is not None:
        inner = clone.get_model_object(adapter.embedder_attr)
        if isinstance(inner, SpaEmbedder):
            inner = inner.inner
        try:
            embedder = SpaEmbedder(inner, adapter.spatial_axes)
        except TypeError as error:
            raise UnsupportedModelError(f"{what}: {error}") from None
        clone.add_object_patch(adapter.embedder_attr, embedder)
    options = clone.model_options.setdefault("transformer_options", {})
    previous = options.get(OVERRIDE_KEY)
    if getattr(previous, "dype_sega_attention", False):
        previous = previous.previous  # a clone of one of ours: chain onto what it had chained
    options[OVERRIDE_KEY] = chained_override(previous)
    options[ATTENTION_KEY] = plan
    add_reload(clone)  # outside the AttentionCall: a call made again opens it again
    for kind, wrapper in ((ext.WrappersMP.OUTER_SAMPLE, run_wrapper), (ext.WrappersMP.CALC_COND_BATCH, step_wrapper),
                          (ext.WrappersMP.APPLY_MODEL, attention_wrapper)):
        if not clone.get_wrappers(kind, ATTENTION_KEY):
            clone.add_wrapper_with_key(kind, ATTENTION_KEY, wrapper)
    logger.debug("%s attention clone of %s: %s", what, type(model.model).__name__, plan)
    return clone
