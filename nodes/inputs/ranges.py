"""The numeric inputs' rules, written once: the widgets show them (min, max, step) and the nodes apply the same rules
to values that come from Python or an API prompt, where no widget clamps them. A value outside gets one error that
names the node, the input and its range."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...spectral import MAX_ALPHA


@dataclass(frozen=True)
class NumberRange:
    name: str
    low: float
    high: float
    step: float
    #: an integer input whose values are multiples of ``step`` (base_resolution: whole tokens of 16 px), 0 allowed
    on_step: bool = False

    @property
    def widget(self) -> dict:
        """The widget's ``min``, ``max`` and ``step``."""
        return {"min": self.low, "max": self.high, "step": self.step}

    def describe(self) -> str:
        if self.on_step:
            return (f"0 (the family default) or a multiple of {self.step:g} from {self.step:g} to {self.high:g} px")
        return f"a number from {self.low:g} to {self.high:g}"

    def check(self, value: object, node: str) -> float:
        """``value`` as a number when it follows the rule, else a ValueError naming ``node``, the input and the rule."""
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        ok = number is not None and math.isfinite(number) and self.low <= number <= self.high
        if ok and self.on_step:
            ok = number == 0 or (number >= self.step and float(number) % self.step == 0)
        if not ok:
            raise ValueError(f"{node}: {self.name} must be {self.describe()}; got {value!r}.")
        return number


BASE_RESOLUTION = NumberRange("base_resolution", 0, 16384, 16, on_step=True)
LAMBDA_T = NumberRange("lambda_t", 0.0, 8.0, 0.05)
LAMBDA_S = NumberRange("lambda_s", 0.0, 8.0, 0.05)
KAPPA = NumberRange("kappa", 0.0, 1.0, 0.005)
ALPHA = NumberRange("alpha", 0.0, MAX_ALPHA, 0.01)
BETA = NumberRange("beta", 0.0, 10.0, 0.1)
SPREAD_MIN = NumberRange("spread_min", 0.0, 1.0, 0.05)
SPREAD_MAX = NumberRange("spread_max", 0.0, 1.0, 0.05)
SPREAD_ALPHA = NumberRange("spread_alpha", 0.1, 8.0, 0.1)
FLOOR = NumberRange("floor", 0.0, 4.0, 0.01)

DYPE_RANGES = (LAMBDA_T, LAMBDA_S, BASE_RESOLUTION)
SEGA_RANGES = (KAPPA, ALPHA, BETA, SPREAD_MIN, SPREAD_MAX, SPREAD_ALPHA, FLOOR, BASE_RESOLUTION)


def check_inputs(node: str, ranges: tuple[NumberRange, ...], values: dict) -> None:
    """Every input of ``ranges`` in ``values`` follows its rule (the first that does not raises)."""
    for number_range in ranges:
        number_range.check(values[number_range.name], node)
