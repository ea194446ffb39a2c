"""HunyuanImage 2.1 (``model_base.HunyuanImage21`` on the HunyuanVideo DiT): 2-D ids (row, col) only, theta 256,
axes [64, 64], patch 1 on a 64-channel 32x VAE latent (32 px per token). Image tokens first, text ids 0.
Both columns are spatial, so the spatial-only rule (nodes/rope_patch/spatial_only.py) rescales every column."""

from .base import FamilyAdapter, TokenEmbedding

HUNYUAN_IMAGE21 = FamilyAdapter(
    name="hunyuan_image21",
    display_name="HunyuanImage 2.1",
    model_base_classes=frozenset({"HunyuanImage21"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(0, 1),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in.proj", "conv"),
    px_per_token=32,
    default_base_px=2560,
    base_source="Tencent-Hunyuan/HunyuanImage-2.1 README: 'only supports 2K' (2048x2048 for 1:1, 2560x1536 for "
    "16:9, 1536x2560 for 9:16): the largest side, 2560",
    theta=256.0,
    axes_dim=(64, 64),
    preview_shift=("linear", 5.0),
)
