"""Chroma (a ``Flux`` subclass: exact class name, so it never passes as Flux.1) and Chroma Radiance (pixel space:
3-channel images, 16x16 pixel patches). Ids (0, row, col) from 0 built in the latent dtype, text ids 0 (Radiance's
optional sequential text ids sit on column 0, left alone by the spatial-only rule: nodes/rope_patch/spatial_only.py),
EmbedND (B,1,N,64,2,2) float32.

Chroma1-HD (1024) and Chroma1-Base (512) are one class with the same weights layout: the user picks Base."""

from .base import FamilyAdapter, TokenEmbedding, Variant

_CHROMA_CARDS = "lodestones/Chroma1-HD and Chroma1-Base model cards (huggingface.co), as quoted by issue 19's review"

CHROMA = FamilyAdapter(
    name="chroma",
    display_name="Chroma",
    model_base_classes=frozenset({"Chroma"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1024,
    base_source=f"Chroma1-HD 1024x1024, Chroma1-Base 512x512: {_CHROMA_CARDS}; ComfyUI template "
    "image_chroma_text_to_image 1024x1024",
    variants=(Variant("Chroma1-HD", (1024, 1024), _CHROMA_CARDS), Variant("Chroma1-Base", (512, 512), _CHROMA_CARDS)),
    theta=10000.0,
    axes_dim=(16, 56, 56),
)

CHROMA_RADIANCE = FamilyAdapter(
    name="chroma_radiance",
    display_name="Chroma Radiance",
    model_base_classes=frozenset({"ChromaRadiance"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=16,
    token_embedding=TokenEmbedding("diffusion_model.img_in_patch", "conv"),
    px_per_token=16,
    default_base_px=1024,
    base_source="ComfyUI template image_chroma1_radiance_text_to_image (EmptyChromaRadianceLatentImage 1024x1024); "
    "no model-card size found (searched the ComfyUI templates and docs)",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    pixel_space=True,
)
