"""The replacement RoPE embedder: an ``nn.Module`` (ComfyUI's object patches must be modules) that holds only the
original embedder. Everything that changes per clone, step or call reaches it through ``runtime.CALL``."""

from __future__ import annotations

import torch

from ..rope import plain_frequencies, rotation_table
from .runtime import CALL, AxisSchedule, concurrent_sampling_error, math_device


class ExtrapolatingRopeEmbedder(torch.nn.Module):
    """Stands in for ``EmbedND`` (or HiDream's copy, which has no ``dim``); outside a patched call (or at/below the
    trained grid) it *is* the original."""

    def __init__(self, original: torch.nn.Module) -> None:
        super().__init__()
        self.original = original
        self.theta = original.theta
        self.axes_dim = list(original.axes_dim)
        if hasattr(original, "dim"):
            self.dim = original.dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        scope = CALL.get()
        if scope is None:
            return self.original(ids)
        if scope.embedder is not self:
            if getattr(scope.embedder, "original", None) is self.original:
                # Another clone's replacement of the same module took its place in the middle of this call.
                raise concurrent_sampling_error("base", "the RoPE embedder", self)
            return self.original(ids)  # an embedder of another model called inside this one's call
        return embed_ids(ids, self.axes_dim, float(self.theta), scope.axes, scope.pe_unsqueeze_dim)


def describe_module(module: object) -> str:
    return f"{type(module).__module__}.{type(module).__qualname__}"


def is_stock_rope_embedder(module: object, spatial_axes: tuple[int, ...]) -> bool:
    """ComfyUI's own EmbedND-style module (its class defined in ``comfy.*``) with theta and the spatial axes.

    Any other class is another node's RoPE replacement: its table is not a function of theta/axes_dim we can
    rebuild, so building ours in its place would silently drop its effect.
    """
    axes_dim = getattr(module, "axes_dim", None)
    return (
        isinstance(module, torch.nn.Module)
        and type(module).__module__.split(".")[0] == "comfy"
        and getattr(module, "theta", None) is not None
        and axes_dim is not None
        and len(axes_dim) > max(spatial_axes)
    )


def embed_ids(ids: torch.Tensor, axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...],
              unsqueeze_dim: int = 1) -> torch.Tensor:
    """The family's pe layout, float32, with the spatial axes' schedules applied to every token on those columns.

    ``ids`` is (B, N, n_columns) in any dtype; the table is (B, N, pairs, 2, 2) with ``unsqueeze_dim`` inserted:
    1 gives EmbedND's (B, 1, N, pairs, 2, 2), 2 HiDream's (B, N, 1, pairs, 2, 2).
    """
    device = math_device(ids.device)
    by_column = {axis.column: axis for axis in spatial}
    tables = []
    for column, dim in enumerate(axes_dim):
        positions = ids[..., column].to(device)
        axis = by_column.get(column)
        if axis is None:
            tables.append(rotation_table(positions, plain_frequencies(dim, theta, device)[None]))
        else:
            temperature = None if axis.temperature is None else axis.temperature.to(device)
            tables.append(rotation_table(positions, axis.freqs.to(device), temperature))
    batch = max(table.shape[0] for table in tables)
    table = torch.cat([t.expand(batch, *t.shape[1:]) for t in tables], dim=-3)
    return table.unsqueeze(unsqueeze_dim).to(ids.device)
