"""Krea 2 (newer hosts; ``model_base.Krea2``, a single-stream DiT, not FLUX.1-Krea-dev): EmbedND over
(index, row, col) with theta 1000 and axes [32, 48, 48] for head dim 128; text ids 0; patch 2 on a Wan-2.1-format
(5-D) latent; references up the index axis, which keeps its frequencies (the spatial-only rule,
nodes/rope_patch/spatial_only.py).

Raw (up to 1k) and Turbo (1k to 2k) are one class, one config: the user picks Raw; the default is Turbo, the
larger, so neither is rescaled at its own sizes unless the user says so."""

from .base import FamilyAdapter, TokenEmbedding, Variant

_README = "krea-ai/krea-2 README"

KREA2 = FamilyAdapter(
    name="krea2",
    display_name="Krea 2",
    model_base_classes=frozenset({"Krea2"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.first", "c ph pw"),
    px_per_token=16,
    default_base_px=2048,
    base_source=f"{_README}: Turbo 'can generate images from 1k ~ 2k resolution' (example 2048x2048), Raw 'trained "
    "to generate upto 1k'",
    variants=(Variant("Krea 2 Turbo", (2048, 2048), f"{_README}: 1k ~ 2k, --width/--height 1024 ~ 2048"),
              Variant("Krea 2 Raw", (1024, 1024), f"{_README}: trained to generate up to 1k")),
    theta=1000.0,
    axes_dim=(32, 48, 48),
)
