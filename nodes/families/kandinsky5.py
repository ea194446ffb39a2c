"""Kandinsky 5 Image Lite (newer hosts; ``model_base.Kandinsky5Image`` on the Kandinsky 5 DiT): ``rope_encode_3d``
builds ids (frame, row, col) from 0 in ``x.dtype`` with batch 1 for ``rope_embedder_3d`` (EmbedND, theta 10000,
axes [32, 48, 48]) and ``movedim``s the table itself, patch (1, 2, 2) on the 16-channel Flux latent. The image
model's ``rope_scale_factor`` is (1, 1, 1) (model detection), so the ids are plain integers; a factor other than 1
(the video models) makes them fractional, which is refused (registry). Text has its own 1-D RoPE
(``rope_embedder_1d``) inside its own encoder blocks and reaches the image only through cross-attention: the image's
self-attention holds image tokens alone. Column 0 is time (one frame) and is never scaled (the spatial-only rule,
nodes/rope_patch/spatial_only.py)."""

from .base import FamilyAdapter, TokenEmbedding


def _integer_positions(base_model) -> bool:
    factor = getattr(getattr(base_model, "diffusion_model", None), "rope_scale_factor", None)
    return factor is not None and all(float(f) == 1.0 for f in factor)


KANDINSKY5_IMAGE = FamilyAdapter(
    name="kandinsky5_image",
    display_name="Kandinsky 5 Image",
    model_base_classes=frozenset({"Kandinsky5Image"}),
    accepts=_integer_positions,
    embedder_attr="diffusion_model.rope_embedder_3d",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.visual_embeddings.in_layer", "ph pw c"),
    px_per_token=16,
    default_base_px=1408,
    base_source="kandinskylab/kandinsky-5 README ('1K resolution (1280x768, 1024x1024 and others)') and "
    "kandinsky/t2v_pipeline.py RESOLUTIONS[1024]: 1024x1024, 1408x640, 640x1408, 1280x768, 1152x896 ...: the "
    "largest side, 1408",
    theta=10000.0,
    axes_dim=(32, 48, 48),
    preview_shift=("linear", 3.0),
)
