"""The SEGA ``recipe`` choices, as SEGA Attention and DyPE Schedule Preview list them (spectral/recipes.py's rules)."""

from __future__ import annotations

from ...spectral import RULES

RECIPE_LABELS = [rules.label for rules in RULES.values()]
RECIPE_TOOLTIP = (
    "Which code SEGA reproduces. paper (official SEGA code): the SEGA authors' inference code (rajabi2001/sega), "
    "behind the paper's published numbers (FLUX.1-dev and Qwen-Image at 2K-5K; default). "
    "diffusers port: apply_dype(method='sega') of the diffusers port (smellslikeml/diffusers), behind its flat-sky "
    "speckle numbers on FLUX.1-Krea-dev. "
    "refined (ours): the spectrum of the latent itself, band-limited, per sample; no published numbers."
)
