"""The three SEGA recipes: which code each one reproduces, and every rule in which they differ.

=====================  ==========================================  ===================================  ==============================
rule                   ``paper``: the SEGA authors' official code   ``port``: the diffusers port          ``refined``: ours
                       (rajabi2001/sega, ``flux_sega`` and          (smellslikeml/diffusers,
                       ``qwen_sega/transformer_*.py``)              ``src/diffusers/hooks/dype.py``)
=====================  ==========================================  ===================================  ==============================
spectrum of            the tokens after the family's patch          the packed latent tokens (the       the latent grid, kept to the
                       embedding (``x_embedder``/``img_in``),       2x2-pooled latent on Flux)          band a token position can
                       channel mean                                 channel mean                        represent (0.5 cycles/token)
batch                  one spectrum: the map averaged over the      one spectrum per sample (its code   one spectrum per sample
                       batch, as its code does                      averages over the batch)
bins                   the codes' own (:mod:`spectral.token_grid`: float32 ``linspace`` axis bins that     one band per harmonic, rings
                       leave some bins empty, index-unit rings, flatness over every ring)                  of physical frequency
scale s                one s for both axes: longest side / trained  per axis                            per axis
                       side (Qwen-Image: per axis, see below)
SEGA-alone positions   static NTK, theta * s^(2d/(d-2)) /           static NTK, theta * s^(d/(d-2))     as the port
                       (1 + 0.1 ln s) on both axes
m_ref                  s^kappa with that s                          s^kappa per axis                    s^kappa per axis
=====================  ==========================================  ===================================  ==============================

Qwen-Image's official code departs from its Flux code (:class:`PaperQuirks`, set on the Qwen-Image adapter): a
1024 px trained size (Qwen-Image's ComfyUI template is 1328²), per-axis s where the smaller axis takes the NTK factor
``1 + (small / big) (ntk_big - 1)``, and the height axis uses the width axis's temperatures. "paper" reproduces them;
"refined" is the clean form. Every other family follows the Flux code's rule with its own trained size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SpectrumSource = Literal["embedding", "tokens", "latent"]


@dataclass(frozen=True)
class RecipeRules:
    """What one recipe does (module table). ``official_ntk``: SEGA-alone positions with the official NTK factor."""

    label: str  # what the node's combo shows
    spectrum: SpectrumSource
    per_sample: bool
    global_scale: bool
    official_ntk: bool


RULES: dict[str, RecipeRules] = {
    "paper": RecipeRules("paper (official SEGA code)", "embedding", per_sample=False,
                         global_scale=True, official_ntk=True),
    "port": RecipeRules("diffusers port", "tokens", per_sample=True, global_scale=False,
                        official_ntk=False),
    "refined": RecipeRules("refined (ours)", "latent", per_sample=True, global_scale=False,
                           official_ntk=False),
}


def recipe_rules(recipe: str) -> RecipeRules:
    try:
        return RULES[recipe]
    except KeyError:
        raise ValueError(f"Unknown SEGA recipe {recipe!r}; expected one of {', '.join(RULES)}.") from None


def recipe_from_label(label: str) -> str:
    """The recipe id for a combo label or an id (``"paper (official SEGA code)"`` or ``"paper"`` -> ``"paper"``)."""
    for name, rules in RULES.items():
        if label in (name, rules.label):
            return name
    labels = ", ".join(repr(rules.label) for rules in RULES.values())
    raise ValueError(f"Unknown SEGA recipe {label!r}; expected one of {labels}.")


@dataclass(frozen=True)
class PaperQuirks:
    """Where a family's official SEGA code departs from the general (Flux) rule; only "paper" reads it.

    * ``base_px``: the trained size that code assumes, when it is not the family's (Qwen-Image: 1024).
    * ``per_axis_scale``: one s per axis; the smaller axis's NTK factor is ``1 + (small / big) (ntk_big - 1)``.
    * ``height_uses_width``: the height axis takes the width axis's temperatures (and the width axis's m_ref).
    """

    base_px: int | None = None
    per_axis_scale: bool = False
    height_uses_width: bool = False


NO_QUIRKS = PaperQuirks()
