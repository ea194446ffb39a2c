"""HRDiT Cascade's settings: HiFlow's (its pipeline is HiFlow's, hrdit/pipeline.py at e4aa8c6) under HRDiT's name and
defaults, plus SPA and HAP. Checked once when made: every input by its definition (nodes/inputs/cascade.py,
nodes/inputs/hrdit.py), then the rules that tie inputs together. Defaults are the official run's (zylwithxy/HRDiT
e4aa8c6 inference.py, configs/pipeline.json: FLUX.1-dev, 1024² -> 2048² -> 4096²); docs/hrdit.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..inputs import hrdit as inputs
from .settings import HiFlowSettings

#: The name every error of the node starts with.
NODE = "HRDiT Cascade"
#: The per-stage lists' defaults that differ from HiFlow's, by input name (the official run's).
OFFICIAL = {rule.name: rule.default for rule in (inputs.HRDIT_STAGE_STEPS, inputs.HRDIT_NTK_FACTOR, inputs.SPA_STEPS)}


@dataclass(frozen=True)
class HrditSettings(HiFlowSettings):
    """HiFlow's settings with HRDiT's defaults, and SPA (on a stage's leading ``spa_steps``, ``group_num`` bundles
    per axis) and HAP (the authors' scope plan, every ``global_anchor``-th block kept) on the stages."""

    node: ClassVar[str] = NODE
    lists: ClassVar[tuple] = inputs.HRDIT_LISTS  # spa_steps among them, parsed with the others

    stage_steps: tuple[int, ...] = (17, 10)
    ntk_factor: tuple[float, ...] = (4.0, 10.0)
    swin: bool = inputs.HRDIT_SWIN.default
    spa: bool = inputs.SPA.default
    hap: bool = inputs.HAP.default
    spa_steps: tuple[int, ...] = (3, 0)
    group_num: int = inputs.GROUP_NUM.default
    global_anchor: int = inputs.GLOBAL_ANCHOR.default

    def __post_init__(self) -> None:
        super().__post_init__()
        checked = {rule.name: rule.check(getattr(self, rule.name), NODE)
                   for rule in (*inputs.HRDIT_NUMBERS, *inputs.HRDIT_FLAGS)}
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        for index, (spa, steps) in enumerate(zip(self.spa_steps, self.stage_steps, strict=True)):
            if spa > steps:
                raise ValueError(f"{NODE}: 'spa_steps' {self.spa_steps}: stage {index + 1} has {steps} steps, so SPA "
                                 f"can be on for at most {steps} of them, not {spa}. Lower 'spa_steps'.")

    def spa_on(self, index: int) -> bool:
        """Whether stage ``index`` runs SPA on any step."""
        return self.spa and self.spa_steps[index] > 0
