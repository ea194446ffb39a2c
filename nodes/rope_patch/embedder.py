"""The replacement RoPE embedder: an ``nn.Module`` (ComfyUI's object patches must be modules) that holds only the
original embedder. Everything that changes per clone, step or call reaches it through ``scopes.CALL``.

Per call it picks how its table is built (tables.py): the stock formula, or the window gather once the run's
verdict for the call's ids signature allows it (ids_check.py: the first call of each signature in a run checks,
later calls gather; non-integer ids, ids that move and tables that carry a gradient always get the stock formula).
"""

from __future__ import annotations

import torch

from ...rope import window_radius
from .errors import concurrent_sampling_error
from .scopes import CALL, CallScope
from .tables import embed_ids, embed_ids_checked

#: The window path pays off while the window (2r + 1 positions) is well below the token count.
MIN_TOKENS_PER_WINDOW_POSITION = 4


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
                raise concurrent_sampling_error("base", "the RoPE embedder", "another clone's DyPE/SEGA embedder")
            return self.original(ids)  # an embedder of another model called inside this one's call
        if ids.shape[0] == 1 and scope.batch > 1:  # one ids row for the call's samples (Lumina's caption on newer
            ids = ids.expand(scope.batch, *ids.shape[1:])  # hosts): one table row per sample, as for a batch of ids
        radius = _window(ids, scope)
        if radius is None:
            return embed_ids(ids, self.axes_dim, float(self.theta), scope.axes, scope.pe_unsqueeze_dim, scope.device)
        key = (len(scope.window_flags), tuple(ids.shape[1:]), ids.dtype)  # this table's place in the call
        gather = scope.verdicts.get(key) is True
        table, flag = embed_ids_checked(ids, self.axes_dim, float(self.theta), scope.axes, radius, gather,
                                        scope.pe_unsqueeze_dim, scope.device)
        scope.window_flags.append((key, flag))
        return table


def _window(ids: torch.Tensor, scope: CallScope) -> int | None:
    """The window radius to check (and, once checked, gather from), or None where it cannot pay off."""
    if scope.verdicts is None or scope.grid is None or ids.dim() != 3:
        return None
    radius = window_radius(ids.shape[-2], scope.grid)
    if MIN_TOKENS_PER_WINDOW_POSITION * (2 * radius + 1) > ids.shape[-2]:
        return None
    return radius


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
