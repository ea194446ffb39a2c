"""What the patch needs to know about one model family. One small module per family fills it in."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class FamilyAdapter:
    """Facts about a RoPE DiT family as ComfyUI implements it (see the design notes, families.md)."""

    name: str  # short id, also used in node options and logs
    display_name: str
    model_base_classes: frozenset[str]  # type(model.model).__name__ values (exact: Chroma subclasses Flux)
    embedder_attr: str  # path for add_object_patch / get_model_object
    spatial_axes: tuple[int, int]  # id columns holding (row, col)
    patch_size: int  # latent pixels per token along each spatial axis
    px_per_token: int  # image pixels per token (VAE factor * patch size)
    default_base_px: int  # trained resolution (square side, pixels)

    def token_grid(self, latent: torch.Tensor) -> tuple[int, int]:
        """Token rows and columns of the generated latent, from its shape (the model pads to the patch size)."""
        height, width = latent.shape[-2], latent.shape[-1]
        p = self.patch_size
        return (height + p // 2) // p, (width + p // 2) // p

    def base_tokens(self, base_px: float) -> float:
        return base_px / self.px_per_token
