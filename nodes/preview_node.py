"""The "DyPE Schedule Preview" node: the schedule picture as an IMAGE (connect it to Preview Image)."""

from __future__ import annotations

import torch
from comfy_api.latest import io

from ..rope import PositionSchedule
from ..spectral import SegaSettings, recipe_from_label
from .inputs.ranges import (
    ALLOCATION,
    BASE_RESOLUTION,
    DYNAMIC,
    FAMILY,
    FLOOR,
    HEIGHT,
    LAMBDA_S,
    LAMBDA_T,
    M_REF,
    METHOD,
    PREVIEW_INPUTS,
    PREVIEW_STEPS,
    RECIPE,
    SEGA,
    SEGA_ALONE,
    SHIFT,
    WIDTH,
    check_inputs,
)
from .inputs.ui_hints import advanced, aliases
from .schedule_preview import FAMILY_CHOICES, PreviewRequest, render

NODE = "DyPE Schedule Preview"


class DyPESchedulePreview(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_SchedulePreview",
            display_name="DyPE Schedule Preview",
            category="advanced/model/high resolution",
            **aliases("schedule", "plot", "RoPE frequencies", "attention temperature"),
            description=(
                "Draws what DyPE and SEGA will do at a target size: for each image axis, how much every RoPE "
                "frequency pair is compressed at every step, and the attention temperature per pair. No model "
                "needed; connect the image to Preview Image."
            ),
            inputs=[
                io.Combo.Input("family", options=list(FAMILY_CHOICES), default=FAMILY.initial,
                               tooltip="Model family: sets the trained resolution and the default shift rule."),
                io.Int.Input("width", default=WIDTH.default, **WIDTH.widget, tooltip="Target width in pixels."),
                io.Int.Input("height", default=HEIGHT.default, **HEIGHT.widget, tooltip="Target height in pixels."),
                io.Int.Input("steps", default=PREVIEW_STEPS.default, **PREVIEW_STEPS.widget,
                             tooltip="Sampling steps (simple schedule)."),
                io.Float.Input("shift", default=SHIFT.default, **SHIFT.widget,
                               tooltip="0 = family default: the model's own sampling shift (Flux: ModelSamplingFlux "
                               "mu 1.15), Qwen-Image the template's ModelSamplingAuraFlow 3.1.", **advanced()),
                io.Combo.Input("method", options=list(METHOD.options), default=METHOD.initial, tooltip="The position rule drawn, as DyPE Patch Model's method: yarn (DyPE's two-stage "
                               "YaRN ramp, default), ntk (NTK-aware base change), pi (position interpolation), off "
                               "(plain RoPE)."),
                io.Boolean.Input("dynamic", default=DYNAMIC.default,
                                 tooltip="On: the compression follows the noise level, step by step (DyPE). Off: one "
                                 "static YaRN/NTK/PI at the target scale for every step."),
                io.Float.Input("lambda_t", default=2.0, **LAMBDA_T.widget,
                               tooltip="λt in κ(t) = t^λt: how fast the curves return to the original high "
                               "frequencies as noise goes down (larger = earlier). Official DyPE: 2.", **advanced()),
                io.Float.Input("lambda_s", default=2.0, **LAMBDA_S.widget,
                               tooltip="λs: the exponent on the NTK base factor (ntk) and on yarn 'power' "
                               "thresholds; yarn 'multiply' (the default) and pi do not use it. Official DyPE: 2.",
                               **advanced()),
                io.Int.Input("base_resolution", default=0, **BASE_RESOLUTION.widget,
                             tooltip="Trained resolution in pixels, which sets the scale s = target / trained per "
                             "axis; 0 = family default.", **advanced()),
                io.Boolean.Input("sega", default=SEGA.default,
                                 tooltip="Show SEGA's per-pair temperatures for a synthetic image latent (on) or "
                                 "YaRN's single temperature (off)."),
                # Added later: optional and last, so saved workflows keep their values in the right widgets.
                io.Boolean.Input("sega_alone", default=SEGA_ALONE.default, optional=True,
                                 tooltip="On: SEGA Attention without DyPE, its recipe's static NTK positions "
                                 "(method, dynamic and the λs are ignored; recipe paper = the published SEGA "
                                 "recipe). Off: DyPE Patch Model then SEGA, our composition (DyPE's dynamic "
                                 "positions)."),
                io.Combo.Input("allocation", options=list(ALLOCATION.options), default=ALLOCATION.initial, optional=True,
                               tooltip="Which band energy each RoPE pair reads in the SEGA curves: rank (pairs spread "
                               "over the bands by their log period, default) or frequency (the band at the pair's "
                               "own frequency).", **advanced()),
                io.Combo.Input("m_ref", options=list(M_REF.options), default=M_REF.initial, optional=True,
                               tooltip="The mean SEGA temperature per axis: power = s^κ (default), yarn = "
                               "0.1·ln s + 1 (DyPE's YaRN temperature).", **advanced()),
                io.Float.Input("floor", default=1.0, **FLOOR.widget, optional=True,
                               tooltip="Lower bound on every per-pair SEGA temperature (default 1.0; 0 = off).",
                               **advanced()),
                io.Combo.Input("recipe", options=list(RECIPE.options), default=RECIPE.initial, optional=True,
                               tooltip="Which SEGA code the temperatures follow: paper (official SEGA code, default), "
                               "diffusers port, refined (ours). The preview has no model: 'paper' reads the "
                               "latent's tokens instead of the model's patch embedding."),
            ],
            outputs=[io.Image.Output(tooltip="The schedule picture.")],
        )

    @classmethod
    def validate_inputs(cls, family: str) -> bool | str:
        """A family by its combo name or by its internal id (what graphs saved before the combo showed names
        hold): ComfyUI's own list check would refuse the id, so this node checks the family itself."""
        try:
            FAMILY.check(family, NODE)
        except ValueError as refused:
            return str(refused)
        return True

    @classmethod
    def execute(cls, family: str, width: int, height: int, steps: int, shift: float, method: str, dynamic: bool,
                lambda_t: float, lambda_s: float, base_resolution: int, sega: bool, sega_alone: bool = False,
                allocation: str = ALLOCATION.initial, m_ref: str = M_REF.initial, floor: float = 1.0,
                recipe: str = RECIPE.initial) -> io.NodeOutput:
        check_inputs(NODE, PREVIEW_INPUTS, dict(
            family=family, width=width, height=height, steps=steps, shift=shift, method=method, dynamic=dynamic,
            lambda_t=lambda_t, lambda_s=lambda_s, base_resolution=base_resolution, sega=sega, sega_alone=sega_alone,
            allocation=allocation, m_ref=m_ref, floor=floor, recipe=recipe))
        request = PreviewRequest(
            family=FAMILY_CHOICES.get(family, family),  # a name from the combo (or an adapter id)
            width=width, height=height, steps=steps, shift=shift or None,
            schedule=PositionSchedule(method=method, dynamic=dynamic, lambda_t=lambda_t, lambda_s=lambda_s),
            base_px=base_resolution, sega=sega, sega_alone=sega_alone,
            sega_settings=SegaSettings(allocation=allocation, m_ref=m_ref, floor=floor,
                                       recipe=recipe_from_label(recipe)),
        )
        picture = render(request)
        pixels = torch.frombuffer(bytearray(picture.tobytes()), dtype=torch.uint8)
        image = pixels.reshape(picture.height, picture.width, 3).to(torch.float32) / 255.0
        return io.NodeOutput(image[None])
