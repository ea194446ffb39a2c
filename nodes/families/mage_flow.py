"""Mage-Flow (newer hosts; ``model_base.MageFlow``, a QwenImage subclass: exact class name, so it is not taken for
Qwen-Image): Qwen-style blocks on a Flux.2 latent with patch 1, centred image ids (Mage's own offset), unrotated
text (ids 0), references on the index axis (left alone: the spatial-only rule, nodes/rope_patch/spatial_only.py)."""

from .base import FamilyAdapter, TokenEmbedding

MAGE_FLOW = FamilyAdapter(
    name="mage_flow",
    display_name="Mage-Flow",
    model_base_classes=frozenset({"MageFlow"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=2048,
    base_source="microsoft/Mage README: one checkpoint generates natively from 512 to 2048 on any aspect ratio "
    "(ComfyUI template image_mage_flow_t2i_int8: 512-2048 px per side): 2048",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    preview_shift=("linear", 6.0),
)
