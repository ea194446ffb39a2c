"""Qwen-Image (and Edit): centred image ids (0, r - h//2, c - w//2), text ids on the diagonal after the image.

The scale comes from the generated latent's grid only (text and reference latents never count). The model casts
the table to its dtype itself, so the embedder returns float32 like stock. Latents are 5-D (B, C, T, H, W). Text on
the diagonal follows the spatial-only rule (nodes/rope_patch/spatial_only.py).
"""

from ...spectral import PaperQuirks
from .base import FamilyAdapter, TokenEmbedding

#: Where the SEGA authors' Qwen-Image code (rajabi2001/sega qwen_sega/transformer_qwenimage.py) departs from its Flux
#: code; reproduced by SEGA's "paper" recipe only (spectral/recipes.py).
OFFICIAL_SEGA_QUIRKS = PaperQuirks(base_px=1024, per_axis_scale=True, height_uses_width=True)

QWEN_IMAGE = FamilyAdapter(
    name="qwen_image",
    display_name="Qwen-Image (incl. Edit)",
    model_base_classes=frozenset({"QwenImage"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1664,
    base_source="QwenLM/Qwen-Image README aspect_ratios: 1328x1328 (1:1) ... 1664x928 (16:9), 928x1664 (9:16) "
    "(also ComfyUI template image_qwen_Image_2512's note): the largest side, 1664. Edit models follow the input "
    "image at about 1 MP (TextEncodeQwenImageEdit: 1024x1024 total pixels), within it",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    preview_shift=("linear", 3.1),
    paper_quirks=OFFICIAL_SEGA_QUIRKS,
)
