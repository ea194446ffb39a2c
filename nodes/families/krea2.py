"""Krea 2 (newer hosts; ``model_base.Krea2``, a single-stream DiT, not FLUX.1-Krea-dev): EmbedND over
(index, row, col) with theta 1000 and axes [32, 48, 48] for head dim 128; text ids 0; patch 2 on a Wan-2.1-format
(5-D) latent; references up the index axis."""

from .base import FamilyAdapter, TokenEmbedding

KREA2 = FamilyAdapter(
    name="krea2",
    display_name="Krea 2",
    model_base_classes=frozenset({"Krea2"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.first", "c ph pw"),
    px_per_token=16,
    default_base_px=1024,
    base_source="1024 (INFERRED: no ComfyUI-side number)",
    theta=1000.0,
    axes_dim=(32, 48, 48),
    text="text ids 0 (never moved); refs on the index axis",
)
