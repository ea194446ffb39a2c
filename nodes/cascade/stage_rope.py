"""Where a cascade's official stage table is built from, and the layout the model takes it in: one rule for
HiFlow's and I-Max's stage models (hiflow_model.py, imax_model.py).

ComfyUI's families: the MODEL's own EmbedND-style embedder, its ``(B, 1, N, pairs, 2, 2)`` table as it is.

Nunchaku FLUX (nodes/families/nunchaku_flux.py): nunchaku's transformer calls its own ``pos_embed`` with ``(N, 3)``
ids and takes ``(1, 1, N, pairs, 1, 2)`` [sin, cos] back, which it pads and packs for its fused kernels. The stage
table is built exactly as on ComfyUI's FLUX.1, from ComfyUI's EmbedND with the transformer's own theta and axes, and
handed over through the pack's one conversion (nodes/rope_patch/nunchaku_embedder.py: ``sincos_pairs``). nunchaku's
kernel rotates the normalized q and k linearly in the table (nunchaku-tech/nunchaku @3a3cc3d,
``src/kernels/zgemm/epilogues.cuh``: x·cos − y·sin, x·sin + y·cos after the RMSNorm), so the proportional temperature
multiplying the table scales q·k by m², as on ComfyUI's Flux; a longer text (I-Max's copies) is padded like any.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..families import FamilyAdapter, UnsupportedModelError
from ..families.base import COSMOS_ROPE, NUNCHAKU_ROPE
from ..rope_patch.embedder import describe_module, is_stock_rope_embedder
from ..rope_patch.nunchaku_embedder import batched_ids, nunchaku_rope_problem, sincos_pairs


class NunchakuStageRope(torch.nn.Module):
    """nunchaku's ``pos_embed`` on a stage clone: the stage embedder's table for the call's ids, in nunchaku's
    layout. Outside a stage's calls I-Max's embedder gives ComfyUI's EmbedND's plain table, nunchaku's own numbers
    (the same formula; bit for bit on the stand-in)."""

    def __init__(self, stage: torch.nn.Module) -> None:
        super().__init__()
        self.stage = stage
        self.theta, self.axes_dim = stage.theta, list(stage.axes_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return sincos_pairs(self.stage(batched_ids(ids)))


@dataclass(frozen=True)
class StageRope:
    """``source``: the ComfyUI-layout embedder the stage embedder is built on (theta, axes_dim, its table);
    ``fit(stage)``: the module to object-patch in, the stage embedder in the model's own layout."""

    source: torch.nn.Module
    fit: Callable[[torch.nn.Module], torch.nn.Module]


def _as_is(stage: torch.nn.Module) -> torch.nn.Module:
    return stage


def stage_rope(model, adapter: FamilyAdapter, node: str) -> StageRope:
    """The MODEL's embedder as a stage table's source, or one error naming ``node``, the class and what to do."""
    name = type(model.model).__name__
    if adapter.embedder_kind == COSMOS_ROPE:
        raise UnsupportedModelError(
            f"{node}: the official stage patch needs an EmbedND-style embedder; {adapter.display_name} ({name}) builds "
            "its table from the latent's shape. Connect a DyPE / SEGA-patched model to 'stage_model' instead.")
    original = model.get_model_object(adapter.embedder_attr)
    if adapter.embedder_kind == NUNCHAKU_ROPE:
        problem = nunchaku_rope_problem(original, adapter.spatial_axes)
        if problem is not None:
            raise UnsupportedModelError(
                f"{node}: {name}.{adapter.embedder_attr}: {problem}; another node replaced it. Connect that model to "
                "'stage_model' instead.")
        from comfy.ldm.flux.layers import EmbedND

        source = EmbedND(getattr(original, "dim", sum(original.axes_dim)), original.theta, list(original.axes_dim))
        return StageRope(source, NunchakuStageRope)
    if not is_stock_rope_embedder(original, adapter.spatial_axes):
        raise UnsupportedModelError(
            f"{node}: {name}.{adapter.embedder_attr} is {describe_module(original)}, not ComfyUI's own EmbedND; "
            "another node replaced it. Connect that model to 'stage_model' instead.")
    return StageRope(original, _as_is)
