"""Anima (newer hosts; ``model_base.Anima``, a Cosmos-Predict2 2B DiT with an LLM text adapter): its RoPE is Cosmos'
``VideoRopePosition3DEmb`` at ``diffusion_model.pos_embedder`` (nodes/rope_patch/cosmos_embedder.py): pairs (time, row,
col) = [44, 42, 42] for head dim 128, theta 10000 times the NTK factor detection sets (extrapolation ratio 4 on rows and
columns), patch 2 on a Wan 2.1-format 8x latent. Time pairs keep the model's own (the spatial-only rule,
nodes/rope_patch/spatial_only.py). Text reaches the image through cross-attention only. Anima samples as a flow model
(sigma in [0, 1]); Cosmos-Predict2 itself (``model_base.CosmosPredict2``) samples EDM-style sigmas and is refused
(registry)."""

from .base import COSMOS_ROPE, ONE_TABLE, FamilyAdapter, TokenEmbedding

ANIMA = FamilyAdapter(
    name="anima",
    display_name="Anima",
    model_base_classes=frozenset({"Anima"}),
    embedder_attr="diffusion_model.pos_embedder",
    embedder_kind=COSMOS_ROPE,
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.x_embedder.proj.1", "c ph pw"),  # PatchEmbed: Rearrange, Linear
    px_per_token=16,
    default_base_px=1024,
    base_source="ComfyUI templates image_anima_base_v1 and image_anima_preview (EmptyLatentImage 1024x1024, "
    "ResolutionSelector at 1 MP; the model card, as mirrored, recommends about 1 MP); no list of aspect sizes "
    "found (searched the templates, the code index and the docs)",
    # 10000 x the NTK factor 4^(42/40) model detection gives every 16-channel Cosmos/Anima checkpoint (the preview
    # uses it; patching uses the live module's own value).
    theta=10000.0 * 4.0 ** (42 / 40),
    axes_dim=(44, 42, 42),
    preview_shift=("linear", 3.0),
    table_batch=ONE_TABLE,  # Cosmos builds one table for the batch from the latent's shape
)
