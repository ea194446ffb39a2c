"""Qwen-Image (and Edit): centred image ids (0, r - h//2, c - w//2), text ids on the diagonal after the image.

The scale comes from the generated latent's grid only (text and reference latents never count). The model casts
the table to its dtype itself, so the embedder returns float32 like stock. Latents are 5-D (B, C, T, H, W).
"""

from .base import FamilyAdapter

QWEN_IMAGE = FamilyAdapter(
    name="qwen_image",
    display_name="Qwen-Image (incl. Edit)",
    model_base_classes=frozenset({"QwenImage"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    px_per_token=16,
    default_base_px=1328,
)
