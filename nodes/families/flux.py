"""Flux.1 (dev, schnell, Krea, Kontext, Fill): ids (index, row, col) from 0, text ids 0, EmbedND (B,1,N,64,2,2). The
index column keeps its frequencies (the spatial-only rule, nodes/rope_patch/spatial_only.py).

Kontext reference latents enter as extra tokens with index 1 and offset positions; the scale comes from the
generated latent (the ``x`` the sampler passes), so references never inflate it. A ``model_base.Flux`` whose params
put text ids on spatial columns (``txt_ids_dims``, newer hosts) is Ovis-Image, not Flux.1 (see ovis.py).
"""

from .base import FamilyAdapter, TokenEmbedding, params_attr


def _text_ids_all_zero(base_model) -> bool:
    return not params_attr(base_model, "txt_ids_dims", [])


FLUX = FamilyAdapter(
    name="flux",
    display_name="Flux.1 (dev / schnell / Krea / Kontext / Fill)",
    model_base_classes=frozenset({"Flux"}),
    accepts=_text_ids_all_zero,
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1024,
    base_source="the DyPE paper's and official code's FLUX base (1024, 64 tokens); BFL publishes no native size "
    "list for FLUX.1 (black-forest-labs/flux: docs/text-to-image.md, TensorRT exports 768-1344 per side; "
    "src/flux/cli.py default 1360x768): kept at DyPE's base, so DyPE's reference results carry over",
    theta=10000.0,
    axes_dim=(16, 56, 56),
)
