"""The kinds of rule a node input follows, each written once and applied wherever a value comes from: the widget
shows it (min, max, step, options), the node applies it to values from Python or an API prompt (where no widget
clamps them and ComfyUI's own checks let NaN through), and the command line takes its limits from it.

A value off its rule gets one ValueError naming the node, the input, the rule and the value:
``HiFlow Cascade: 'alphas' values must be from 0 to 1 (one per stage, separated by commas); got '1, 2'.``
The definitions themselves (one per input) are in ranges.py (DyPE, SEGA, the preview) and cascade.py (the guided
cascades).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from ...spectral.command_line import bounded

#: The separator of a per-stage list typed as text.
SEPARATOR = ","


def refuse(node: str, name: str, rule: str, value: object) -> NoReturn:
    """The one error of every rule: ``<node>: '<input>' must be <rule>; got <value>.``"""
    raise ValueError(f"{node}: '{name}' must be {rule}; got {value!r}.")


def _number(value: object) -> float | int | None:
    """``value`` as a Python number, or None for anything else (bools, text, None, containers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


@dataclass(frozen=True)
class NumberRange:
    """A number input: finite, in [low, high] (low itself excluded where ``above``), whole where ``integer``."""

    name: str
    low: float
    high: float
    step: float
    default: float | None = None
    integer: bool = False
    above: bool = False  # the low end excluded: > low (a factor that must be positive)
    #: an integer input whose values are multiples of ``step`` (base_resolution: whole tokens of 16 px), 0 allowed
    on_step: bool = False

    @property
    def widget(self) -> dict:
        """The widget's ``min``, ``max`` and ``step``."""
        return {"min": self.low, "max": self.high, "step": self.step}

    def bounds(self) -> str:
        """"from 0 to 8", "> 0 and at most 1000" (whole numbers written out: a seed's 18446744073709551615)."""
        low, high = (str(int(v)) if self.integer else f"{v:g}" for v in (self.low, self.high))
        return f"> {low} and at most {high}" if self.above else f"from {low} to {high}"

    def describe(self) -> str:
        if self.on_step:
            return f"0 (the family default) or a multiple of {self.step:g} from {self.step:g} to {self.high:g} px"
        return f"{'a whole number' if self.integer else 'a number'} {self.bounds()}"

    def accepts(self, number: float | int) -> bool:
        """Whether a number (already a Python number) follows the rule."""
        if not math.isfinite(number) or not (self.low < number if self.above else self.low <= number):
            return False
        if number > self.high or (self.integer and number != int(number)):
            return False
        return not self.on_step or number == 0 or (number >= self.step and float(number) % self.step == 0)

    def check(self, value: object, node: str) -> float | int:
        """``value`` when it follows the rule (an int where ``integer``), else the one error."""
        number = _number(value)
        if number is None or not self.accepts(number):
            refuse(node, self.name, self.describe(), value)
        return int(number) if self.integer else number

    def argument(self) -> Callable[[str], float]:
        """The command line's argparse ``type`` for this input: the same limits, one-line usage errors."""
        return bounded(int if self.integer or self.on_step else float, self.step if self.on_step else self.low,
                       self.high, multiple=int(self.step) if self.on_step else 1, zero=self.on_step)


@dataclass(frozen=True)
class Flag:
    """A boolean input: True or False, never text ("False" is a non-empty string, so ``bool()`` would say True)."""

    name: str
    default: bool = True

    def describe(self) -> str:
        return "True or False (a boolean, not text)"

    def check(self, value: object, node: str) -> bool:
        if not isinstance(value, bool):
            refuse(node, self.name, self.describe(), value)
        return value


@dataclass(frozen=True)
class Choice:
    """A combo input: one of ``options`` (the first is the default unless ``default`` says otherwise); ``saved``:
    values older graphs hold, accepted but no longer offered."""

    name: str
    options: tuple[str, ...]
    default: str | None = None
    saved: tuple[str, ...] = ()

    @property
    def initial(self) -> str:
        return self.options[0] if self.default is None else self.default

    def describe(self) -> str:
        return "one of " + ", ".join(repr(option) for option in self.options)

    def check(self, value: object, node: str) -> str:
        if not isinstance(value, str) or value not in self.options + self.saved:
            refuse(node, self.name, self.describe(), value)
        return value


@dataclass(frozen=True)
class StageList:
    """A per-stage list, typed as text: numbers separated by commas, one entry per stage (one entry alone serves
    every stage), each entry following ``entry``. Parsed once, into a tuple; from Python a number or a sequence of
    numbers is taken too. A cascade's stage sizes set the number of stages the other lists must match."""

    entry: NumberRange
    default: str

    @property
    def name(self) -> str:
        return self.entry.name

    def how(self) -> str:
        """What the tooltip and every message say about the form."""
        return f"one per stage, separated by '{SEPARATOR}'; one entry alone applies to every stage"

    def tooltip(self, meaning: str) -> str:
        return f"{meaning} {'Whole numbers' if self.entry.integer else 'Numbers'} {self.entry.bounds()}, {self.how()}."

    def parse(self, value: object, node: str, stages: int | None = None, counted_by: str = "") -> tuple:
        """The entries as a tuple (ints where ``integer``), ``stages`` long when given (``counted_by``: the list that
        set it), or the one error."""
        numbers = self._entries(value, node)
        if stages is not None and len(numbers) == 1:
            numbers = numbers * stages
        if stages is not None and len(numbers) != stages:
            source = f" ('{counted_by}' has {stages})" if counted_by else ""
            raise ValueError(f"{node}: '{self.name}' has {len(numbers)} values for {stages} stages{source}; give "
                             f"{self.how()}; got {value!r}.")
        if not all(self.entry.accepts(number) for number in numbers):
            whole = "whole numbers " if self.entry.integer else ""
            raise ValueError(f"{node}: '{self.name}' values must be {whole}{self.entry.bounds()} ({self.how()}); "
                             f"got {value!r}.")
        return tuple(int(n) for n in numbers) if self.entry.integer else tuple(float(n) for n in numbers)

    def _entries(self, value: object, node: str) -> tuple[float, ...]:
        form = (f"{'whole numbers' if self.entry.integer else 'numbers'} separated by '{SEPARATOR}', one per stage, "
                f"e.g. {self.default!r}")
        if _number(value) is not None:
            return (value,)
        if isinstance(value, str):
            numbers = tuple(_parsed(part) for part in value.split(SEPARATOR))
        elif isinstance(value, Sequence):
            numbers = tuple(_number(entry) for entry in value)
        else:
            numbers = ()
        if not numbers or None in numbers:
            refuse(node, self.name, form, value)
        return numbers


def _parsed(text: str) -> float | None:
    """One typed entry as a number ("nan" and "inf" included: the range refuses them), or None."""
    try:
        return float(text)
    except ValueError:
        return None


def check_inputs(node: str, rules: Sequence, values: dict) -> dict:
    """Every input of ``rules`` in ``values`` checked (the first off its rule raises); the checked values by name."""
    return {rule.name: rule.check(values[rule.name], node) for rule in rules}
