"""The cascade's settings as one immutable value, checked once when it is made: every input by its definition
(nodes/inputs/cascade.py), then the rules that tie inputs together (the stages grow; a stage runs at most the base
steps). A ``HiFlowSettings`` that exists is valid, so the cascade only asserts what it needs."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import ClassVar

from ..inputs import cascade as inputs

#: The name every error of the node starts with.
NODE = "HiFlow Cascade"
#: The per-stage lists' defaults, by input name (the official code's).
OFFICIAL = {rule.name: rule.default for rule in inputs.HIFLOW_LISTS}
_NUMBERS = (inputs.STEPS, inputs.DENOISE, inputs.CFG, inputs.SHARPEN)
_FLAGS = (inputs.PROPORTIONAL_ATTENTION, inputs.SWIN)


@dataclass(frozen=True)
class HiFlowSettings:
    """Everything one cascade needs besides models, conditioning and the seed. Lists are per stage: give them as
    tuples or as the node's text ("2, 4"); they are stored as tuples. A rule built on HiFlow's (HRDiT's) subclasses
    it with its own ``node`` (the name its errors start with) and defaults."""

    node: ClassVar[str] = NODE
    #: the per-stage list inputs, scales first (a rule built on HiFlow's names its own: its defaults in messages)
    lists: ClassVar[tuple] = inputs.HIFLOW_LISTS

    steps: int = inputs.STEPS.default
    denoise: float = inputs.DENOISE.default
    cfg: float = inputs.CFG.default
    scales: tuple[float, ...] = (2.0, 4.0)
    stage_steps: tuple[int, ...] = (16, 10)
    stage_guidance: tuple[float, ...] = (4.5, 6.0)  # 0: keep the conditioning's own guidance
    alphas: tuple[float, ...] = (1.0, 0.25)
    betas: tuple[float, ...] = (0.5, 0.5)
    filter_ratio: tuple[float, ...] = (0.2, 0.2)
    ntk_factor: tuple[float, ...] = (10.0, 10.0)
    proportional_attention: bool = True
    swin: bool = True
    sharpen: float = inputs.SHARPEN.default
    schedule: str = inputs.SCHEDULE.initial  # nodes/cascade/schedule.py

    def __post_init__(self) -> None:
        checked = {rule.name: rule.check(getattr(self, rule.name), self.node) for rule in (*_NUMBERS, *_FLAGS)}
        checked["schedule"] = inputs.SCHEDULE.check(self.schedule, self.node)
        scales = inputs.SCALES.parse(self.scales, self.node)
        checked["scales"] = scales
        for rule in self.lists[1:]:
            checked[rule.name] = rule.parse(getattr(self, rule.name), self.node, len(scales), counted_by="scales")
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        self._check_together()

    @property
    def base_steps_run(self) -> int:
        """How many of the base schedule's last steps the base pass runs: all at denoise 1 (from a prompt), the
        last round(steps x denoise) from an image."""
        return max(1, round(self.steps * self.denoise))

    def _check_together(self) -> None:
        if any(later <= earlier for earlier, later in pairwise(self.scales)):
            raise ValueError(f"{self.node}: 'scales' must grow from stage to stage (each stage larger than the one before, "
                             f"x the input latent's size); got {self.scales}.")
        ran = self.base_steps_run
        for index, steps in enumerate(self.stage_steps):
            if steps > ran:
                why = f"the {ran} base steps that denoise {self.denoise} runs" if ran < self.steps else \
                    f"the {self.steps} base steps"
                raise ValueError(f"{self.node}: 'stage_steps' {self.stage_steps}: stage {index + 1} has {steps} steps, but "
                                 f"a stage runs the tail of the base schedule and can use at most {why}. Lower "
                                 "'stage_steps' or raise 'denoise' / 'steps'.")

