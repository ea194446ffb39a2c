"""Flux.2 (dev) and Klein: EmbedND(theta 2000, axes [32]*4) over (index, row, col, text position), patch 1 on a
128-channel 16x VAE latent. Text sits on axis 3 (never scaled); reference images go up the index axis in steps of
10 (``ref_index_scale``), so they never move on the spatial columns either (the spatial-only rule,
nodes/rope_patch/spatial_only.py)."""

from .base import FamilyAdapter, TokenEmbedding

FLUX2 = FamilyAdapter(
    name="flux2",
    display_name="Flux.2 (dev / Klein)",
    model_base_classes=frozenset({"Flux2"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=2048,
    base_source="BFL: FLUX.2 outputs up to 4 MP (bfl.ai/blog/flux-2, quoted by ComfyUI's docs "
    "tutorials/flux/flux-2-dev.mdx): 2048x2048; Klein (the same class, nothing in the "
    "model tells it apart) has no size of its own in these sources and gets FLUX.2's",
    theta=2000.0,
    axes_dim=(32, 32, 32, 32),
    preview_shift=("exponential", 2.02),
)
