"""Lens (newer hosts; ``model_base.Lens``): EmbedND ``pos_embed`` (head dim 64: axes [8, 28, 28]) over
(frame, row, col); centred image ids and text on the diagonal from max(h//2, w//2), as Qwen-Image; one token per
Flux.2 latent pixel. The ids have batch 1 whatever the batch. Text follows the spatial-only rule
(nodes/rope_patch/spatial_only.py)."""

from .base import FamilyAdapter, TokenEmbedding

LENS = FamilyAdapter(
    name="lens",
    display_name="Lens",
    model_base_classes=frozenset({"Lens"}),
    embedder_attr="diffusion_model.pos_embed",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1440,
    base_source="ComfyUI templates image_lens_t2i / image_lens_turbo_t2i: 'the Lens 1440 base-resolution workflow "
    "family', up to 1440x1440 (EmptyLatentImage 1440x1440)",
    theta=10000.0,
    axes_dim=(8, 28, 28),
    preview_shift=("exponential", 1.829),
)
