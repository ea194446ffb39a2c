"""Ovis-Image (newer hosts): a plain ``model_base.Flux`` whose text ids run 0..L-1 on the row *and* col columns
(``params.txt_ids_dims == [1, 2]``, set by model detection from the Ovis keys). Detected from those params, not the
class name. Text follows the spatial-only rule (nodes/rope_patch/spatial_only.py): it gets the same per-axis
schedule as the image, so every text↔image phase difference is the stock model's function of the position
difference.
"""

from .base import FamilyAdapter, TokenEmbedding, params_attr


def _text_on_spatial_columns(base_model) -> bool:
    return list(params_attr(base_model, "txt_ids_dims", []) or []) == [1, 2]


OVIS_IMAGE = FamilyAdapter(
    name="ovis_image",
    display_name="Ovis-Image",
    model_base_classes=frozenset({"Flux"}),
    accepts=_text_on_spatial_columns,
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1024,
    base_source="AIDC-AI/Ovis-Image README (inference example --image_size 1024); ComfyUI template "
    "image_ovis_text_to_image 1024x1024",
    theta=10000.0,
    axes_dim=(16, 56, 56),
)
