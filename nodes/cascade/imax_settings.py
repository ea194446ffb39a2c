"""I-Max Cascade's settings as one immutable value, checked once when it is made: every input by its definition
(nodes/inputs/cascade.py), then the rules that tie inputs together (the stages grow). Defaults are the official
README's call (PRIS-CV/I-Max 3b38c11: FLUX.1-dev, 1024² -> 4096²); docs/imax.md."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ..inputs import cascade as inputs

#: The name every error of the node starts with.
NODE = "I-Max Cascade"
#: The per-stage lists' defaults, by input name (the official README's).
OFFICIAL = {rule.name: rule.default for rule in inputs.IMAX_LISTS}
_NUMBERS = (inputs.STEPS, inputs.DENOISE, inputs.CFG, inputs.BASE_SHIFT, inputs.WAVELET_LEVEL)
_FLAGS = (inputs.PROPORTIONAL_ATTENTION, inputs.TEXT_DUPLICATION, inputs.SWIN)


@dataclass(frozen=True)
class ImaxSettings:
    """Everything one I-Max cascade needs besides models, conditioning and the seed. Lists are per stage (the
    official code has one stage); give them as tuples or as the node's text ("4")."""

    steps: int = inputs.STEPS.default  # num_inference_steps1
    denoise: float = inputs.DENOISE.default
    cfg: float = inputs.CFG.default
    scales: tuple[float, ...] = (4.0,)
    stage_steps: tuple[int, ...] = (30,)  # num_inference_steps2
    stage_guidance: tuple[float, ...] = (7.0,)  # guidance_scale2; 0 keeps the conditioning's own
    base_shift: float = inputs.BASE_SHIFT.default  # time_shift_1; 0: the MODEL's own shift
    stage_shift: tuple[float, ...] = (6.0,)  # time_shift_2; 0: the MODEL's own shift
    ntk_factor: tuple[float, ...] = (10.0,)
    proportional_attention: bool = True
    text_duplication: bool = True
    swin: bool = True
    guidance_schedule: str = "cosine_decay"
    wavelet_level: int = inputs.WAVELET_LEVEL.default  # dwt_level

    def __post_init__(self) -> None:
        checked = {rule.name: rule.check(getattr(self, rule.name), NODE) for rule in (*_NUMBERS, *_FLAGS)}
        checked["guidance_schedule"] = inputs.GUIDANCE_SCHEDULE.check(self.guidance_schedule, NODE)
        scales = inputs.IMAX_SCALES.parse(self.scales, NODE)
        checked["scales"] = scales
        for rule in inputs.IMAX_LISTS[1:]:
            checked[rule.name] = rule.parse(getattr(self, rule.name), NODE, len(scales), counted_by="scales")
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        if any(later <= earlier for earlier, later in pairwise(self.scales)):
            raise ValueError(f"{NODE}: 'scales' must grow from stage to stage (each stage larger than the one before, "
                             f"x the input latent's size); got {self.scales}.")

    @property
    def base_steps_run(self) -> int:
        """How many of the base schedule's last steps the base pass runs: all at denoise 1 (from a prompt), the
        last round(steps x denoise) from an image. Every stage runs its own whole schedule from noise."""
        return max(1, round(self.steps * self.denoise))
