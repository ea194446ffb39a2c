"""The replacement RoPE embedder: an ``nn.Module`` (ComfyUI's object patches must be modules) that holds only the
original embedder. Everything that changes per clone, step or call reaches it through ``scopes.CALL``.

Every call builds its table with the pack's float64 formula (tables.py): each token's own cos/sin, exact for any
ids (non-integer, moved between calls, half precision) and differentiable.
"""

from __future__ import annotations

import torch

from .config import LABEL_TABLE
from .errors import concurrent_sampling_error
from .scopes import CALL
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
        if torch.compiler.is_compiling():  # dynamo would drop the label anyway, with a warning per compile
            return embed_ids(ids, self.axes_dim, float(self.theta), scope.axes, scope.pe_unsqueeze_dim, scope.device)
        with torch.profiler.record_function(LABEL_TABLE):
            return embed_ids(ids, self.axes_dim, float(self.theta), scope.axes, scope.pe_unsqueeze_dim, scope.device)


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
