"""The replacement for Cosmos' ``VideoRopePosition3DEmb`` (Anima, a Cosmos-Predict2 model): that module builds the
rotary table from the latent's shape, not from ids, as one ``(L, pairs, 2, 2)`` table for every image of the batch,
pairs in (time, row, col) order, each pair EmbedND's ``[[cos, -sin], [sin, cos]]``. Its spatial frequencies are
EmbedND's with theta ``10000 · ntk_factor`` (the NTK extrapolation the checkpoint was trained with), so the pack's
schedule is built from that theta. Rows and columns get the call's schedule on their integer positions; the time
pairs are the original's, untouched (its own theta and fps modulation). At or below the trained size, or outside a
patched call, the original table is returned as it is. Time pairs keep the model's own by the spatial-only rule
(spatial_only.py), which ``keep_model_columns`` applies.
"""

from __future__ import annotations

import torch

from .batch_table import one_row, per_image_temperatures_error
from .embedder import ExtrapolatingRopeEmbedder
from .spatial_only import keep_model_columns
from .tables import embed_ids

#: ComfyUI's class (comfy.ldm.cosmos.position_embedding) this module stands in for.
COSMOS_ROPE_CLASS = "VideoRopePosition3DEmb"


def cosmos_rope_problem(module: object) -> str | None:
    """Why ``module`` is not a Cosmos rotary embedder the pack can rebuild, or None when it is."""
    if type(module).__name__ != COSMOS_ROPE_CLASS or type(module).__module__.split(".")[0] != "comfy":
        return f"it is {type(module).__module__}.{type(module).__qualname__}, not ComfyUI's {COSMOS_ROPE_CLASS}"
    if float(module.h_ntk_factor) != float(module.w_ntk_factor):
        return (f"its row and column NTK factors differ ({module.h_ntk_factor} and {module.w_ntk_factor}); the "
                "pack builds both axes from one theta")
    return None


class CosmosRopeEmbedder(ExtrapolatingRopeEmbedder):
    """Stands in for ``VideoRopePosition3DEmb``: ``forward(x_B_T_H_W_C, fps, device)`` returns its table."""

    def __init__(self, original: torch.nn.Module) -> None:
        torch.nn.Module.__init__(self)
        self.original = original
        dim_t = 2 * original.dim_temporal_range.numel()
        dim_spatial = 2 * original.dim_spatial_range.numel()
        self.axes_dim = [dim_t, dim_spatial, dim_spatial]  # id columns (time, row, col), as the table's pairs
        self.theta = 10000.0 * float(original.h_ntk_factor)

    def forward(self, x_B_T_H_W_C: torch.Tensor, fps=None, device=None, dtype=None) -> torch.Tensor:
        table = self.original(x_B_T_H_W_C, fps=fps, device=device)
        scope = self.call_scope()
        if scope is None:
            return table
        _, frames, rows, cols, _ = x_B_T_H_W_C.shape
        ids = _grid_ids(frames, rows, cols, table.device)
        axes = one_row(scope.axes)
        if axes is None:
            rows = max(axis.temperature.shape[0] for axis in scope.axes if axis.temperature is not None)
            raise per_image_temperatures_error(scope.family, rows)
        ours = embed_ids(ids, self.axes_dim, self.theta, axes, 1, scope.math_device)[0, 0]  # (L, pairs, 2, 2)
        return keep_model_columns(table, ours.to(table.dtype), self.axes_dim, [axis.column for axis in axes], 1)


def _grid_ids(frames: int, rows: int, cols: int, device: torch.device) -> torch.Tensor:
    """(1, T·H·W, 3) integer (frame, row, col) positions in the table's (t h w) token order."""
    grid = torch.stack(torch.meshgrid(torch.arange(frames, device=device), torch.arange(rows, device=device),
                                      torch.arange(cols, device=device), indexing="ij"), dim=-1)
    return grid.reshape(1, -1, 3).to(torch.float32)
