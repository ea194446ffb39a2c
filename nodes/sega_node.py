"""The "SEGA Attention" node."""

from __future__ import annotations

from comfy_api.latest import io

from ..spectral import MAX_ALPHA, SegaSettings, recipe_from_label
from .families import AUTO_VARIANT, variant_base_px
from .inputs.ranges import (
    ALLOCATION,
    ALPHA,
    BASE_RESOLUTION,
    BETA,
    FLOOR,
    KAPPA,
    M_REF,
    RECIPE,
    SEGA_INPUTS,
    SPREAD_ALPHA,
    SPREAD_MAX,
    SPREAD_MIN,
    check_inputs,
)
from .inputs.recipe import RECIPE_TOOLTIP
from .inputs.ui_hints import advanced, aliases
from .inputs.variant import variant_input
from .rope_patch.clone import family_of, patch_model


class SEGAAttention(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_SEGAAttention",
            display_name="SEGA Attention",
            category="advanced/model/high resolution",
            **aliases("Spectral-Energy Guided Attention", "attention temperature", "speckle", "YaRN mscale"),
            description=(
                "Spectral-Energy Guided Attention: replaces the single YaRN attention temperature by one temperature "
                "per RoPE frequency pair, computed every step from the spectrum of the current latent, per image axis "
                "(recipe 'paper': of its patch-embedded tokens averaged over the batch, as the official code; the "
                "other recipes: per sample). Removes the multicoloured speckle in flat regions at 4K while keeping detail. Alone, "
                "with the default recipe 'paper', it is the SEGA authors' own code (its static NTK positions, "
                "spectrum and temperatures), the one behind the paper's numbers. After 'DyPE Patch Model' it keeps "
                "DyPE's dynamic positions and supplies only the temperatures (the recipe's spectrum and m_ref): our "
                "composition, no published numbers yet. At or below the trained size the model is unchanged."
            ),
            inputs=[
                io.Model.Input("model", tooltip="A model of a supported RoPE family (image or video), patched by DyPE or not."),
                io.Float.Input("kappa", default=0.08, **KAPPA.widget,
                               tooltip="κ in m_ref = s^κ: the mean attention temperature per axis at scale s.", **advanced()),
                io.Float.Input("alpha", default=0.15, **ALPHA.widget,
                               tooltip=f"α: how far the per-pair temperatures may move away from m_ref (0 = uniform m_ref). "
                               f"At most {MAX_ALPHA}, which keeps every temperature above 0.", **advanced()),
                io.Float.Input("beta", default=1.5, **BETA.widget,
                               tooltip="β: sharpness of tanh(β·z) on the standardized log band energy.", **advanced()),
                io.Float.Input("spread_min", default=0.0, **SPREAD_MIN.widget,
                               tooltip="The spread for a flat, noise-like spectrum (early steps).", **advanced()),
                io.Float.Input("spread_max", default=1.0, **SPREAD_MAX.widget,
                               tooltip="The spread for a fully structured spectrum (late steps).", **advanced()),
                io.Float.Input("spread_alpha", default=1.5, **SPREAD_ALPHA.widget,
                               tooltip="Shaping exponent from spectral concentration to the spread.", **advanced()),
                io.Float.Input("floor", default=1.0, **FLOOR.widget,
                               tooltip="Lower bound for every per-pair temperature, at every step (the port's min_mscale, "
                               "1.0). 0 = off: the temperatures then average exactly to m_ref.", **advanced()),
                io.Int.Input("base_resolution", default=0, **BASE_RESOLUTION.widget,
                             tooltip="Trained resolution in pixels (the long side for non-square video families, as in "
                             "DyPE Patch Model); 0 = family default. A DyPE node's non-zero setting takes precedence, "
                             "whatever the node order."),
                # Added after the first release: optional and last, so saved workflows and API prompts keep working.
                io.Combo.Input("allocation", options=list(ALLOCATION.options), default=ALLOCATION.initial, optional=True,
                               tooltip="Which band energy each RoPE pair reads. rank: pairs spread over the bands "
                               "by their log period (the published port's, default). frequency: each pair reads "
                               "the band at its own frequency in cycles per token.", **advanced()),
                io.Combo.Input("m_ref", options=list(M_REF.options), default=M_REF.initial, optional=True,
                               tooltip="The mean temperature per axis. power: s^κ (the port and the SEGA paper, "
                               "default). yarn: 0.1·ln s + 1, DyPE's YaRN temperature, so SEGA only redistributes "
                               "it across pairs.", **advanced()),
                io.Combo.Input("recipe", options=list(RECIPE.options), default=RECIPE.initial, optional=True,
                               tooltip=RECIPE_TOOLTIP),
                variant_input(),
            ],
            outputs=[io.Model.Output(tooltip="A patched clone; the input model is unchanged.")],
        )

    @classmethod
    def execute(cls, model, kappa: float, alpha: float, beta: float, spread_min: float, spread_max: float,
                spread_alpha: float, floor: float, base_resolution: int, allocation: str = ALLOCATION.initial,
                m_ref: str = M_REF.initial, recipe: str = RECIPE.initial, variant: str = AUTO_VARIANT) -> io.NodeOutput:
        check_inputs("SEGA Attention", SEGA_INPUTS,
                     dict(kappa=kappa, alpha=alpha, beta=beta, spread_min=spread_min, spread_max=spread_max,
                          spread_alpha=spread_alpha, floor=floor, base_resolution=base_resolution,
                          allocation=allocation, m_ref=m_ref, recipe=recipe))
        settings = SegaSettings(kappa=kappa, alpha=alpha, beta=beta, spread_min=spread_min, spread_max=spread_max,
                                spread_alpha=spread_alpha, floor=floor, allocation=allocation, m_ref=m_ref,
                                recipe=recipe_from_label(recipe))
        variant_px = variant_base_px(variant, family_of(model))
        return io.NodeOutput(patch_model(model, lambda config: config.with_sega(settings, base_resolution, variant_px)))
