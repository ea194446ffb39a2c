"""What a guided cascade's stage sampler tells every model call of a stage step (nodes/cascade/sampling.py puts it
there): which stage, which step of how many, at which sigma. A stage-model transform that acts on some steps only
(HRDiT's SPA on a stage's leading steps) reads it with ``stage_step(transformer_options)``; outside a cascade stage
(the base pass, any other sampler) there is none.

It travels in the ``transformer_options`` of the step's calls, as the engine's step scope does (scopes.py), so the
calls ComfyUI runs on worker threads see it too; the sampler writes it into fresh option dicts for each step, never
into the MODEL's own ``model_options``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

STAGE_STEP_KEY = "dype_sega_stage_step"


@dataclass(frozen=True)
class StageStep:
    stage: int  # 0-based stage index (the base pass is not a stage)
    step: int  # 0-based step within the stage
    steps: int  # the stage's step count
    sigma: torch.Tensor  # the step's sigma as the sampler holds it (0-d, on the latent's device: no host sync)

    def __deepcopy__(self, memo: dict) -> StageStep:
        return self  # immutable: a copied options dict still names the same step


def stage_step(transformer_options: dict | None) -> StageStep | None:
    """The stage step of a model call, or None outside a cascade stage."""
    return (transformer_options or {}).get(STAGE_STEP_KEY)


def with_stage_step(model_options: dict, step: StageStep) -> dict:
    """``model_options`` with ``step`` in a fresh ``transformer_options``: the given dicts are not written."""
    options = dict(model_options)
    options["transformer_options"] = {**model_options.get("transformer_options", {}), STAGE_STEP_KEY: step}
    return options
