"""OmniGen2: the EmbedND *inside* ``OmniGen2RotaryPosEmbed`` (the outer module has an 8-argument forward and
slices the table itself). Ids int32: caption (i, i, i) on every column, reference k at (t_k, row, col), the target
at (t_last, row, col). Its forward has no DIFFUSION_MODEL wrapper, which the pack does not need: sigma comes from
APPLY_MODEL. The caption sits on the spatial columns, so it follows the spatial-only rule
(nodes/rope_patch/spatial_only.py). Boogu (newer
hosts; an OmniGen2 subclass with a dual-stream stage) uses the same rotary module."""

from .base import FamilyAdapter, TokenEmbedding

OMNIGEN2 = FamilyAdapter(
    name="omnigen2",
    display_name="OmniGen2",
    model_base_classes=frozenset({"Omnigen2"}),
    embedder_attr="diffusion_model.rope_embedder.rope_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.x_embedder", "ph pw c"),
    px_per_token=16,
    default_base_px=1024,
    base_source="VectorSpaceLab/OmniGen2 README: default output 1024x1024 (max_pixels default 1024*1024); "
    "ComfyUI docs (omnigen2.mdx) recommended 1024x1024",
    theta=10000.0,
    axes_dim=(40, 40, 40),
    preview_shift=("linear", 2.6),
)

BOOGU = FamilyAdapter(
    name="boogu",
    display_name="Boogu-Image",
    model_base_classes=frozenset({"Boogu"}),
    embedder_attr="diffusion_model.rope_embedder.rope_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.x_embedder", "ph pw c"),
    px_per_token=16,
    default_base_px=1024,
    base_source="ComfyUI templates image_boogu_image_0_1_turbo_t2i (EmptyLatentImage 1024x1024, no larger size "
    "in its notes); no model card found in the sources searched",
    theta=10000.0,
    axes_dim=(40, 40, 40),
    preview_shift=("linear", 3.16),
)
