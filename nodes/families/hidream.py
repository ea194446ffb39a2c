"""HiDream-I1: its own EmbedND copy (theta 10000, axes [64, 32, 32], no ``dim``) that returns (B, N, 1, pairs, 2, 2).
Ids (0, row, col) with the image tokens first, then T5 and Llama text tokens at 0. Column 0 keeps its frequencies
(the spatial-only rule, nodes/rope_patch/spatial_only.py)."""

from .base import TOKENS_FIRST, FamilyAdapter, TokenEmbedding

HIDREAM = FamilyAdapter(
    name="hidream",
    display_name="HiDream-I1",
    model_base_classes=frozenset({"HiDream"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.x_embedder.proj", "ph pw c"),
    px_per_token=16,
    default_base_px=1360,
    base_source="HiDream-ai/HiDream-I1 gradio_demo.py RESOLUTION_OPTIONS: 1024x1024, 1360x768, 768x1360, "
    "1168x880, 1248x832 ...: the largest side, 1360",
    theta=10000.0,
    axes_dim=(64, 32, 32),
    pe_unsqueeze_dim=TOKENS_FIRST,
    preview_shift=("linear", 3.0),
)
