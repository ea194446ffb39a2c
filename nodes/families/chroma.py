"""Chroma (a ``Flux`` subclass: exact class name, so it never passes as Flux.1) and Chroma Radiance (pixel space:
3-channel images, 16x16 pixel patches). Ids (0, row, col) from 0 built in the latent dtype, text ids 0 (Radiance's
optional sequential text ids sit on column 0), EmbedND (B,1,N,64,2,2) float32."""

from .base import FamilyAdapter, TokenEmbedding

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
    base_source="SwarmUI default 1024 (INFERRED)",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    text="text ids 0 (never moved)",
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
    base_source="EmptyChromaRadianceLatentImage default 1024",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    text="text ids 0, or sequential on column 0 (never scaled)",
    pixel_space=True,
)
