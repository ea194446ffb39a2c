"""HRDiT's rule in the cascade room (arXiv 2608.07003; official code zylwithxy/HRDiT at e4aa8c6, MIT): HiFlow's rule
(its pipeline is HiFlow's, hrdit/pipeline.py), with HRDiT's defaults and its stage models: the official NTK stage
model (or the node's 'stage_model': DyPE / SEGA / DyPE -> SEGA) sampled through an attention clone that runs SPA on
the stage's leading steps and HAP on every step (nodes/rope_patch/attention_clone.py, nodes/hap/). docs/hrdit.md.
"""

from __future__ import annotations

import logging
from functools import cache

from ..families import NUNCHAKU_FLUX, UnsupportedModelError
from ..hap.kernel import hap_kernel
from ..hap.scope_plan import ScopePlan, load_plan
from ..rope_patch.attention_clone import attention_clone
from ..rope_patch.spa import AttentionPlan, SpaSettings
from .hiflow import HiFlowMethod
from .hiflow_model import official_stage_model
from .hrdit_settings import NODE, HrditSettings
from .method import StageContext

logger = logging.getLogger(__name__)
#: The families whose attention SPA and HAP know (text tokens first, FLUX.1's double / single blocks, FLUX's rope):
#: the official code's FLUX.1-dev.
ATTENTION_FAMILIES = ("flux",)  # Nunchaku FLUX is FLUX.1 too, but its attention is nunchaku's fused kernel


@cache
def official_plan() -> ScopePlan:
    """The authors' scope plan (nodes/hap/data, MIT), read once."""
    return load_plan()


def attention_plan(settings: HrditSettings, index: int) -> AttentionPlan | None:
    """Stage ``index``'s SPA and HAP, or None where both are off for it."""
    spa = settings.spa_on(index)
    if not spa and not settings.hap:
        return None
    kernel = hap_kernel(official_plan(), settings.global_anchor) if settings.hap else None
    return AttentionPlan(spa=SpaSettings(settings.group_num) if spa else None,
                         spa_steps=(0, settings.spa_steps[index]), kernel=kernel)


def hrdit_stage_models(settings: HrditSettings):
    """The room's per-stage model hook (method.py): the stage's model, then SPA and HAP on a clone of it."""

    def stage_model(context: StageContext):
        index = context.index
        model = context.stage_model or official_stage_model(context.model, context.adapter,
                                                            settings.ntk_factor[index],
                                                            settings.proportional_attention, NODE)
        plan = attention_plan(settings, index)
        if plan is None:
            return model
        if context.adapter.name == NUNCHAKU_FLUX.name:
            raise UnsupportedModelError(
                f"{NODE}: SPA and HAP replace the model's attention through ComfyUI's attention override; Nunchaku "
                "FLUX runs its attention inside nunchaku's fused kernels, which no override reaches. Turn 'spa' and "
                "'hap' off to run HRDiT's cascade without them on this model, or load the FLUX.1 checkpoint with "
                "Load Diffusion Model for SPA and HAP.")
        if context.adapter.name not in ATTENTION_FAMILIES:
            raise UnsupportedModelError(
                f"{NODE}: SPA and HAP replace FLUX.1's attention (text tokens first, double- and single-stream "
                f"blocks), as the official code does; {context.adapter.display_name} "
                f"({type(context.model.model).__name__}) is not FLUX.1. Turn 'spa' and 'hap' off to run HRDiT's "
                "cascade without them.")
        logger.debug("%s stage %d: %s", NODE, index + 1, plan)
        return attention_clone(model, context.adapter, plan, NODE)

    return stage_model


def hrdit_method(settings: HrditSettings) -> HiFlowMethod:
    """HRDiT in the room: HiFlow's rule with HRDiT's settings and stage models."""
    return HiFlowMethod(settings, stage_models=hrdit_stage_models(settings))
