"""One definition per input of DyPE Patch Model, SEGA Attention and DyPE Schedule Preview (the kinds of rule:
rules.py). The widgets show them, the nodes apply them to every value (from the widget, Python or an API prompt)
and ``python <pack> schedule-preview`` takes its limits from them. The guided cascades' inputs: cascade.py."""

from __future__ import annotations

from ...rope import METHODS, THRESHOLD_RULES
from ...spectral import ALLOCATIONS, MAX_ALPHA, REFERENCE_RULES
from ..families import LISTED
from .recipe import RECIPE_LABELS
from .rules import Choice, Flag, NumberRange, check_inputs

__all__ = ["check_inputs"]  # re-exported: the nodes check their inputs with the definitions below

BASE_RESOLUTION = NumberRange("base_resolution", 0, 16384, 16, on_step=True)
LAMBDA_T = NumberRange("lambda_t", 0.0, 8.0, 0.05)
LAMBDA_S = NumberRange("lambda_s", 0.0, 8.0, 0.05)
METHOD = Choice("method", METHODS, default="yarn")
DYNAMIC = Flag("dynamic")
YARN_THRESHOLDS = Choice("yarn_thresholds", THRESHOLD_RULES)

KAPPA = NumberRange("kappa", 0.0, 1.0, 0.005)
ALPHA = NumberRange("alpha", 0.0, MAX_ALPHA, 0.01)
BETA = NumberRange("beta", 0.0, 10.0, 0.1)
SPREAD_MIN = NumberRange("spread_min", 0.0, 1.0, 0.05)
SPREAD_MAX = NumberRange("spread_max", 0.0, 1.0, 0.05)
SPREAD_ALPHA = NumberRange("spread_alpha", 0.1, 8.0, 0.1)
FLOOR = NumberRange("floor", 0.0, 4.0, 0.01)
ALLOCATION = Choice("allocation", ALLOCATIONS, default="rank")
M_REF = Choice("m_ref", REFERENCE_RULES, default="power")
RECIPE = Choice("recipe", tuple(RECIPE_LABELS))

#: The preview's family combo: the models' names (what it shows) and the adapters' ids (what graphs saved before
#: the combo showed names hold).
FAMILY = Choice("family", tuple(a.display_name for a in LISTED), saved=tuple(a.name for a in LISTED),
                default=next(a.display_name for a in LISTED if a.name == "flux"))
#: The preview's target size: its memory and time grow with the size and the steps, so both are bounded here.
WIDTH = NumberRange("width", 16, 16384, 16, default=4096, integer=True)
HEIGHT = NumberRange("height", 16, 16384, 16, default=4096, integer=True)
PREVIEW_STEPS = NumberRange("steps", 1, 200, 1, default=28, integer=True)  # the picture is 12 px wide per step
SHIFT = NumberRange("shift", 0.0, 20.0, 0.01, default=0.0)  # 0: the family default
SEGA = Flag("sega")
SEGA_ALONE = Flag("sega_alone", default=False)

DYPE_INPUTS = (METHOD, DYNAMIC, LAMBDA_T, LAMBDA_S, BASE_RESOLUTION, YARN_THRESHOLDS)
SEGA_INPUTS = (KAPPA, ALPHA, BETA, SPREAD_MIN, SPREAD_MAX, SPREAD_ALPHA, FLOOR, BASE_RESOLUTION, ALLOCATION, M_REF,
               RECIPE)
PREVIEW_INPUTS = (FAMILY, WIDTH, HEIGHT, PREVIEW_STEPS, SHIFT, METHOD, DYNAMIC, LAMBDA_T, LAMBDA_S, BASE_RESOLUTION,
                  SEGA, SEGA_ALONE, ALLOCATION, M_REF, FLOOR, RECIPE)
