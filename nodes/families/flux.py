"""Flux.1 (dev, schnell, Krea, Kontext, Fill): ids (index, row, col) from 0, text ids 0, EmbedND (B,1,N,64,2,2).

Kontext reference latents enter as extra tokens with index 1 and offset positions; the scale comes from the
generated latent (the ``x`` the sampler passes), so references never inflate it.
"""

from .base import FamilyAdapter

FLUX = FamilyAdapter(
    name="flux",
    display_name="Flux.1 (dev / schnell / Krea / Kontext / Fill)",
    model_base_classes=frozenset({"Flux"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    px_per_token=16,
    default_base_px=1024,
)
