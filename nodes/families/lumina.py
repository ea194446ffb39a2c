"""Lumina 2 and Z-Image (both ``model_base.Lumina2``, NextDiT): ids (caption seq, row, col). Caption tokens count up
column 0 (never scaled: the spatial-only rule, nodes/rope_patch/spatial_only.py) and sit at 0 on the spatial columns;
image tokens share one column-0 value. The model ``movedim``s EmbedND's (B,1,N,...) itself, so the embedder keeps
EmbedND's layout. Told apart by the RoPE base the model was built with (model detection sets 256 for Z-Image, 10000 for
Lumina 2). Z-Image pixel space (newer hosts) has its own class and patches RGB pixels directly (the patch is read from
the model). Newer hosts call the embedder once per segment (caption, image, references) with batch-1 ids: every call
gets the same per-call schedule."""

from dataclasses import replace

from .base import FamilyAdapter, TokenEmbedding


def _rope_theta(base_model) -> float:
    return float(getattr(getattr(base_model.diffusion_model, "rope_embedder", None), "theta", 0.0))


Z_IMAGE = FamilyAdapter(
    name="z_image",
    display_name="Z-Image",
    model_base_classes=frozenset({"Lumina2"}),
    accepts=lambda base_model: _rope_theta(base_model) == 256.0,
    embedder_attr="diffusion_model.rope_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.x_embedder", "ph pw c"),
    px_per_token=16,
    default_base_px=2048,
    base_source="Tongyi-MAI/Z-Image README: 'the official Z-Image resolutions' (ComfyUI-ZImageLatent), the presets "
    "of the official Z-Image-Turbo Space in 1024/1280/1536 classes up to 2048x1152 and 1152x2048: the largest "
    "side, 2048",
    theta=256.0,
    axes_dim=(32, 48, 48),
    preview_shift=("linear", 3.0),
)

# Lumina 2: Z-Image's layout and caption rule with its own RoPE (the class both share tells them apart by theta).
LUMINA2 = replace(
    Z_IMAGE,
    name="lumina2",
    display_name="Lumina-Image 2",
    accepts=None,
    default_base_px=1024,
    base_source="Alpha-VLLM/Lumina-Image-2.0 README model table: resolution 1024; ComfyUI template "
    "image_netayume_lumina_t2i note: best at 1024x1024",
    theta=10000.0,
    axes_dim=(32, 32, 32),
    preview_shift=("linear", 6.0),
)

# Z-Image's RoPE on RGB pixels: same axes and caption layout, its own class, the patch read from the model.
Z_IMAGE_PIXEL = replace(
    Z_IMAGE,
    name="z_image_pixel",
    display_name="Z-Image pixel space",
    model_base_classes=frozenset({"ZImagePixelSpace"}),
    accepts=None,
    patch_size=16,  # replaced by the model's own (bound())
    default_base_px=1024,
    base_source="INFERRED 1024: no size published for the pixel-space checkpoint (lodestones/Zeta-Chroma) in the "
    "sources searched (ComfyUI templates, the code index); Z-Image's own presets start at 1024",
    pixel_space=True,
)
