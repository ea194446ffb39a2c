"""The replacement for nunchaku's FLUX ``pos_embed`` (nodes/families/nunchaku_flux.py): the pack's table in the layout
nunchaku's transformer packs for its fused kernels.

Read from nunchaku-tech/nunchaku @3a3cc3d: ``transformer_flux.EmbedND`` (v1, what ComfyUI-nunchaku loads) and
``embeddings.NunchakuFluxPosEmbed`` (v2) take ``(N, 3)`` ids (the transformer concatenates ``txt_ids[0]`` and
``img_ids[0]``; with diffusers >= 0.31 they add the batch dim themselves) and return ``(1, 1, N, pairs, 1, 2)``
float32, each pair ``[sin, cos]`` of ``pos · theta^(-2k/dim)``, the axes' pairs in column order; the blocks assert
a batch of 1 and pack it (``pack_rotemb``). ComfyUI's EmbedND pair ``[[cos, -sin], [sin, cos]]`` holds the same two
numbers, so the pack's table (tables.py: every token's own cos/sin, times SEGA's or YaRN's temperature) is read out
of it exactly. Outside a patched call (and at or below the trained size) the original module runs.

The table stays float32 whatever the ids' dtype (bf16 as ComfyUI-nunchaku @dbfd194 runs: its loader sets ComfyUI's
dtype to bf16, ``nodes/models/flux.py`` line 296, and the wrapper builds the ids in it): ``pack_rotemb`` asserts a
float32 table (``transformer_flux.py`` line 74, ``embeddings.py`` line 120) and the kernel reads float [sin, cos]
pairs (``src/kernels/zgemm/epilogues.cuh`` lines 276, 386-395); the conversion below never casts.
"""

from __future__ import annotations

import torch

from .embedder import ExtrapolatingRopeEmbedder

#: nunchaku's class names (v1, v2) and the package they come from.
NUNCHAKU_ROPE_CLASSES = frozenset({"EmbedND", "NunchakuFluxPosEmbed"})
NUNCHAKU_PACKAGE = "nunchaku"


def nunchaku_rope_problem(module: object, spatial_axes: tuple[int, ...]) -> str | None:
    """Why ``module`` is not nunchaku's FLUX rotary embedder the pack can rebuild, or None when it is."""
    cls = type(module)
    if cls.__name__ not in NUNCHAKU_ROPE_CLASSES or cls.__module__.split(".")[0] != NUNCHAKU_PACKAGE:
        return f"it is {cls.__module__}.{cls.__qualname__}, not nunchaku's EmbedND / NunchakuFluxPosEmbed"
    if len(getattr(module, "axes_dim", ())) <= max(spatial_axes):
        return f"its axes_dim {getattr(module, 'axes_dim', None)} has no row and column axes"
    return None


def batched_ids(ids: torch.Tensor) -> torch.Tensor:
    """nunchaku's ``(N, 3)`` ids (the transformer drops the batch) as the ``(1, N, 3)`` the pack's tables take."""
    return ids if ids.dim() == 3 else ids[None]


def sincos_pairs(table: torch.Tensor) -> torch.Tensor:
    """ComfyUI's ``(B, 1, N, pairs, 2, 2)`` [[cos, -sin], [sin, cos]] -> nunchaku's ``(B, 1, N, pairs, 1, 2)``
    [sin, cos]: the same two numbers, read out, nothing recomputed. The one rule between the two layouts (DyPE /
    SEGA here, the cascades' stage tables in nodes/cascade/stage_rope.py)."""
    return torch.stack((table[..., 1, 0], table[..., 0, 0]), dim=-1).unsqueeze(-2)


class NunchakuRopeEmbedder(ExtrapolatingRopeEmbedder):
    """Stands in for nunchaku's ``pos_embed``: ``forward(ids)`` returns its ``(1, 1, N, pairs, 1, 2)`` [sin, cos]."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        scope = self.call_scope()
        if scope is None:
            return self.original(ids)
        return sincos_pairs(self.table(batched_ids(ids), scope))
