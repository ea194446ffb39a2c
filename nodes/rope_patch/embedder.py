"""The replacement RoPE embedder: an ``nn.Module`` (ComfyUI's object patches must be modules) that holds only the
original embedder. Everything that changes per clone, step or call reaches it through ``scopes.CALL``.

Every call builds its table with the pack's float64 formula (tables.py): each token's own cos/sin, exact for any
ids (non-integer, moved between calls, half precision) and differentiable.
"""

from __future__ import annotations

import torch

from ...rope import plain_frequencies
from .batch_table import table_rows
from .config import LABEL_TABLE
from .errors import concurrent_sampling_error
from .scopes import CALL, AxisSchedule, CallScope
from .tables import embed_ids


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
        scope = self.call_scope()
        if scope is None:
            return self.original(ids)
        return self.table(ids, scope)

    def call_scope(self) -> CallScope | None:
        """This call's scope, or None when the original's table is wanted: outside a patched call (or at/below the
        trained grid), or inside another model's call."""
        scope = CALL.get()
        if scope is None or scope.embedder is self:
            return scope
        if getattr(scope.embedder, "original", None) is self.original:
            # Another clone's replacement of the same module took its place in the middle of this call.
            raise concurrent_sampling_error("base", "the RoPE embedder", "another clone's DyPE/SEGA embedder")
        return None  # an embedder of another model called inside this one's call

    def table(self, ids: torch.Tensor, scope: CallScope) -> torch.Tensor:
        """The call's table for (B, N, columns) ids in the family's layout, as many rows as the model takes."""
        ids, axes = table_rows(ids, scope)
        if torch.compiler.is_compiling():  # dynamo would drop the label anyway, with a warning per compile
            return embed_ids(ids, self.axes_dim, float(self.theta), axes, scope.pe_unsqueeze_dim, scope.math_device)
        with torch.profiler.record_function(LABEL_TABLE):
            return embed_ids(ids, self.axes_dim, float(self.theta), axes, scope.pe_unsqueeze_dim, scope.math_device)

    def spa_table(self, ids: torch.Tensor) -> torch.Tensor:
        """SPA's table for bundled ``ids`` (spa.py): the model's own frequencies on every column, with this call's
        temperatures (SEGA's, YaRN's) on the spatial ones: SPA replaces the positions, not the temperatures."""
        scope = self.call_scope()
        if scope is None:
            return self.original(ids)
        ids, axes = table_rows(ids, scope)
        theta = float(self.theta)
        plain = tuple(AxisSchedule(axis.column,
                                   plain_frequencies(self.axes_dim[axis.column], theta, scope.math_device)[None],
                                   axis.temperature) for axis in axes)
        return embed_ids(ids, self.axes_dim, theta, plain, scope.pe_unsqueeze_dim, scope.math_device)


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
