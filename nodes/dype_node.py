"""The "DyPE Patch Model" node."""

from __future__ import annotations

from comfy_api.latest import io

from ..rope import PositionSchedule
from .families import ADAPTERS, AUTO_VARIANT, LISTED, variant_base_px
from .inputs.ranges import (
    BASE_RESOLUTION,
    DYNAMIC,
    DYPE_INPUTS,
    LAMBDA_S,
    LAMBDA_T,
    METHOD,
    YARN_THRESHOLDS,
    check_inputs,
)
from .inputs.ui_hints import advanced, aliases
from .inputs.variant import variant_input
from .rope_patch.clone import family_of, patch_model

_COMMON_BASE = max({a.default_base_px for a in ADAPTERS}, key=[a.default_base_px for a in ADAPTERS].count)
_BASE_DEFAULTS = ", ".join([f"{a.display_name} {a.default_base_px} px" for a in ADAPTERS
                            if a.default_base_px != _COMMON_BASE] + [f"others {_COMMON_BASE} px"])


#: The supported families, from the adapters themselves (a family added to ADAPTERS shows up here).
_MODEL_TOOLTIP = (f"A RoPE diffusion transformer of a supported family: {'; '.join(a.display_name for a in LISTED)} "
                  "(some need a newer ComfyUI, which says so). Others get an error listing these.")


class DyPEPatchModel(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_PatchModel",
            display_name="DyPE Patch Model",
            category="advanced/model/high resolution",
            **aliases("Dynamic Position Extrapolation", "position interpolation", "RoPE scaling"),
            description=(
                "Dynamic Position Extrapolation: lets RoPE image DiTs (Flux.1/.2, Chroma, Qwen-Image, Z-Image, HiDream, "
                "HunyuanImage, OmniGen2 and more) sample far above their trained resolution "
                "(4096² and beyond) with no training and no extra cost. At each step the RoPE frequencies of the "
                "image axes are rescaled by a schedule of the noise level: early steps see compressed low "
                "frequencies (global layout), late steps get the original high frequencies back (fine detail). "
                "The target size comes from the latent you sample; at or below the trained size the model is "
                "unchanged."
            ),
            inputs=[
                io.Model.Input("model", tooltip=_MODEL_TOOLTIP),
                io.Combo.Input(
                    "method", options=list(METHOD.options), default=METHOD.initial,
                    tooltip="yarn: DyPE's two-stage YaRN ramp (best; with its attention temperature 0.1·ln s + 1). "
                    "ntk: NTK-aware base change. pi: position interpolation, positions divided by s^κ(t) (exactly s at pure "
                    "noise, as static PI). off: plain RoPE (only useful with SEGA).",
                ),
                io.Boolean.Input(
                    "dynamic", default=DYNAMIC.default,
                    tooltip="On: DyPE, the extrapolation follows the noise level (t = sigma). Off: a static "
                    "YaRN/NTK/PI at the target scale for every step.",
                ),
                io.Float.Input(
                    "lambda_t", default=2.0, **LAMBDA_T.widget,
                    tooltip="λt in κ(t) = t^λt: how fast the original high frequencies come back as noise goes "
                    "down. Larger = they return earlier (at higher noise); smaller = extrapolate longer. Official DyPE: 2.",
                    **advanced(),
                ),
                io.Float.Input(
                    "lambda_s", default=2.0, **LAMBDA_S.widget,
                    tooltip="λs, for ntk (official DyPE: 2): the NTK base factor is base_ntk^(λs·κ(t)); and for yarn "
                    "'power' thresholds (thresholds^(λs·κ(t))). Not used by yarn 'multiply' (the default) nor by pi, "
                    "which compresses positions by exactly s at pure noise (static PI) and by s^κ(t) later.",
                    **advanced(),
                ),
                io.Int.Input(
                    "base_resolution", default=0, **BASE_RESOLUTION.widget,
                    tooltip=f"The model's trained resolution in pixels: its long side (image families are square). "
                    f"0 = family default ({_BASE_DEFAULTS}). Video families trained non-square keep their trained "
                    "aspect (Wan 14B: 1280 = 1280x720, 832 = 832x480), oriented like your latent. Each axis is "
                    "scaled by its own tokens / trained tokens; a video's frame axis is never scaled.",
                ),
                io.Combo.Input(
                    "yarn_thresholds", options=list(YARN_THRESHOLDS.options), default=YARN_THRESHOLDS.initial,
                    tooltip="How κ(t) modulates the YaRN ramp thresholds: multiply (official DyPE, current) or "
                    "power (the first DyPE release: thresholds^(λs·κ)).",
                    **advanced(),
                ),
                # Added after the first release: optional and last, so saved workflows and API prompts keep working.
                variant_input(),
            ],
            outputs=[io.Model.Output(tooltip="A patched clone; the input model is unchanged.")],
        )

    @classmethod
    def execute(cls, model, method: str, dynamic: bool, lambda_t: float, lambda_s: float, base_resolution: int,
                yarn_thresholds: str, variant: str = AUTO_VARIANT) -> io.NodeOutput:
        check_inputs("DyPE Patch Model", DYPE_INPUTS,
                     dict(method=method, dynamic=dynamic, lambda_t=lambda_t, lambda_s=lambda_s,
                          base_resolution=base_resolution, yarn_thresholds=yarn_thresholds))
        schedule = PositionSchedule(method=method, dynamic=dynamic, lambda_t=lambda_t, lambda_s=lambda_s,
                                    threshold_rule=yarn_thresholds)
        variant_px = variant_base_px(variant, family_of(model))
        return io.NodeOutput(patch_model(
            model, lambda config: config.with_positions(schedule, base_resolution, variant_px)))
