"""The official stage model on a clone: the rotary table built with theta x ntk_factor on every axis, times the
proportional-attention temperature (rope/hiflow_stage.py). The input MODEL is untouched: only the clone carries
the object patch, and the replacement module holds its two numbers and the original embedder, nothing per call."""

from __future__ import annotations

import copy
import logging

import torch

from ...rope.hiflow_stage import ntk_theta, proportional_temperature, trained_attention_tokens
from ..families import FamilyAdapter, UnsupportedModelError
from ..rope_patch.config import read_config
from ..rope_patch.reload import add_reload
from .families import trained_image_tokens
from .settings import NODE
from .stage_rope import stage_rope

logger = logging.getLogger(__name__)


class HiFlowStageEmbedder(torch.nn.Module):
    """ComfyUI's own embedder with theta x factor; its table (every row, text rows included) times m, so q·k
    scales by m² = sqrt(log_T(N)), N the tokens of the call (the ids' length)."""

    def __init__(self, original: torch.nn.Module, factor: float, trained_tokens: float, proportional: bool) -> None:
        super().__init__()
        self.original = original
        self.scaled = copy.deepcopy(original)  # holds no weights: EmbedND-style modules keep only theta and axes
        self.scaled.theta = ntk_theta(original.theta, factor)
        self.theta = self.scaled.theta
        self.axes_dim = list(original.axes_dim)
        self.trained_tokens = float(trained_tokens)
        self.proportional = bool(proportional)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        table = self.scaled(ids)
        if not self.proportional:
            return table
        m = proportional_temperature(int(ids.shape[1]), self.trained_tokens)  # from the shape: no host sync
        return table if m == 1.0 else table * m

    def spa_table(self, ids: torch.Tensor) -> torch.Tensor:
        """HRDiT's SPA variants (nodes/rope_patch/spa.py): the model's own theta (the official ntk_factor=1.0 for
        bundled ids), with the same proportional-attention temperature."""
        table = self.original(ids)
        if not self.proportional:
            return table
        m = proportional_temperature(int(ids.shape[1]), self.trained_tokens)
        return table if m == 1.0 else table * m


def official_stage_model(model, adapter: FamilyAdapter, factor: float, proportional: bool, node: str = NODE):
    """A clone of ``model`` with HiFlow's official stage rotary table and attention scale (HRDiT's too: its
    stages are HiFlow's, ``node`` names the node in errors)."""
    name = type(model.model).__name__
    if read_config(model.model_options.get("transformer_options", {})) is not None:
        raise UnsupportedModelError(
            f"{node}: the 'model' input ({name}) is already patched by DyPE / SEGA, so the official stage patch "
            "(NTK x factor, proportional attention) would replace theirs. Connect the patched model to "
            "'stage_model' (the stages then use it as it is) and the unpatched one to 'model'.")
    rope = stage_rope(model, adapter, node)
    clone = model.clone()
    add_reload(clone)  # the stage table survives memory freed mid-stage (rope_patch/reload.py)
    tokens = trained_attention_tokens(trained_image_tokens(adapter, model))
    clone.add_object_patch(adapter.embedder_attr,
                           rope.fit(HiFlowStageEmbedder(rope.source, factor, tokens, proportional)))
    logger.debug("HiFlow stage model for %s: theta x %s, proportional attention %s (T=%s)", name, factor,
                 proportional, tokens)
    return clone
