"""LongCat-Image (newer hosts; ``model_base.LongCatImage``, a Flux subclass): text ids 0..L-1 on rows and cols
(``txt_ids_dims [1, 2]``), and the model's own ``rope_options`` shift the image by the text length on both spatial
axes (and to index 1). Positions are taken as the model builds them; the schedule only changes frequencies, so the
offset cancels in every phase difference. Text follows the spatial-only rule
(nodes/rope_patch/spatial_only.py)."""

from .base import FamilyAdapter, TokenEmbedding

LONGCAT_IMAGE = FamilyAdapter(
    name="longcat_image",
    display_name="LongCat-Image",
    model_base_classes=frozenset({"LongCatImage"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1344,
    base_source="meituan-longcat/LongCat-Image README and scripts/inference_t2i.py: 1344x768 (the largest "
    "documented side; its DPO training config uses 1024)",
    theta=10000.0,
    axes_dim=(16, 56, 56),
)
