"""The cascade's settings as one immutable value, parsed from the node's text lists with errors naming the input."""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import OFFICIAL as OFFICIAL_SCHEDULE
from .schedule import SCHEDULES

#: The official defaults (run_hiflow.py at da351a8): 1024² base, stages 2048² and 4096².
OFFICIAL = {
    "scales": "2, 4", "stage_steps": "16, 10", "stage_guidance": "4.5, 6", "alphas": "1.0, 0.25",
    "betas": "0.5, 0.5", "filter_ratio": "0.2, 0.2", "ntk_factor": "10, 10",
}


def parse_floats(text: str, name: str, count: int | None = None) -> tuple[float, ...]:
    """"1.0, 0.25" -> (1.0, 0.25); one value is repeated to ``count``; anything else names ``name``."""
    try:
        values = tuple(float(part) for part in str(text).replace(";", ",").split(",") if part.strip())
    except ValueError:
        raise ValueError(f"HiFlow: '{name}' must be numbers separated by commas (one per stage), got {text!r}.") from None
    if not values:
        raise ValueError(f"HiFlow: '{name}' is empty; give one number per stage, e.g. {OFFICIAL.get(name, '1, 1')!r}.")
    if count is not None and len(values) == 1:
        values = values * count
    if count is not None and len(values) != count:
        raise ValueError(f"HiFlow: '{name}' has {len(values)} values for {count} stages ({text!r}); give one per "
                         f"stage, in the order of 'scales'.")
    return values


@dataclass(frozen=True)
class HiFlowSettings:
    """Everything one cascade needs besides models and conditioning. Lists are per stage."""

    steps: int = 30
    denoise: float = 1.0
    cfg: float = 1.0
    scales: tuple[float, ...] = (2.0, 4.0)
    stage_steps: tuple[int, ...] = (16, 10)
    stage_guidance: tuple[float, ...] = (4.5, 6.0)  # 0: keep the conditioning's own guidance
    alphas: tuple[float, ...] = (1.0, 0.25)
    betas: tuple[float, ...] = (0.5, 0.5)
    filter_ratio: tuple[float, ...] = (0.2, 0.2)
    ntk_factor: tuple[float, ...] = (10.0, 10.0)
    proportional_attention: bool = True
    swin: bool = True
    sharpen: float = 1.0
    schedule: str = OFFICIAL_SCHEDULE  # nodes/hiflow/schedule.py

    @classmethod
    def from_text(cls, *, steps: int, denoise: float, cfg: float, scales: str, stage_steps: str,
                  stage_guidance: str, alphas: str, betas: str, filter_ratio: str, ntk_factor: str,
                  proportional_attention: bool = True, swin: bool = True, sharpen: float = 1.0,
                  schedule: str = OFFICIAL_SCHEDULE) -> HiFlowSettings:
        parsed_scales = parse_floats(scales, "scales")
        n = len(parsed_scales)
        raw_steps = parse_floats(stage_steps, "stage_steps", n)
        if any(s != int(s) for s in raw_steps):
            raise ValueError(f"HiFlow: 'stage_steps' must be whole numbers, got {stage_steps!r}.")
        settings = cls(steps=int(steps), denoise=float(denoise), cfg=float(cfg), scales=parsed_scales,
                       stage_steps=tuple(int(s) for s in raw_steps),
                       stage_guidance=parse_floats(stage_guidance, "stage_guidance", n),
                       alphas=parse_floats(alphas, "alphas", n), betas=parse_floats(betas, "betas", n),
                       filter_ratio=parse_floats(filter_ratio, "filter_ratio", n),
                       ntk_factor=parse_floats(ntk_factor, "ntk_factor", n),
                       proportional_attention=bool(proportional_attention), swin=bool(swin), sharpen=float(sharpen),
                       schedule=str(schedule))
        settings.check()
        return settings

    @property
    def base_steps_run(self) -> int:
        """How many of the base schedule's last steps the base pass runs: all at denoise 1 (from a prompt), the
        last round(steps x denoise) from an image."""
        return max(1, round(self.steps * self.denoise))

    def check(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"HiFlow: 'schedule' must be one of {', '.join(repr(s) for s in SCHEDULES)}; got "
                             f"{self.schedule!r}.")
        if self.steps < 2:
            raise ValueError(f"HiFlow: 'steps' must be at least 2, got {self.steps}.")
        if not 0.0 < self.denoise <= 1.0:
            raise ValueError(f"HiFlow: 'denoise' must be in (0, 1], got {self.denoise}.")
        previous = 1.0
        for scale in self.scales:
            if scale <= previous:
                raise ValueError(f"HiFlow: 'scales' must grow from stage to stage and exceed 1 (x the input latent's "
                                 f"size), got {self.scales}.")
            previous = scale
        ran = self.base_steps_run
        for index, steps in enumerate(self.stage_steps):
            if not 1 <= steps <= ran:
                why = f"the {ran} base steps that denoise {self.denoise} runs" if ran < self.steps else \
                    f"the {self.steps} base steps"
                raise ValueError(f"HiFlow: stage {index + 1} has {steps} steps ('stage_steps'), but a stage runs the "
                                 f"tail of the base schedule and can use at most {why}. Lower 'stage_steps' or raise "
                                 "'denoise' / 'steps'.")
        for name in ("filter_ratio", "ntk_factor"):
            if any(v <= 0 for v in getattr(self, name)) and name == "ntk_factor":
                raise ValueError(f"HiFlow: 'ntk_factor' values must be > 0 (1 = the model's own theta), got "
                                 f"{self.ntk_factor}.")
            if any(v < 0 for v in getattr(self, name)):
                raise ValueError(f"HiFlow: '{name}' values must be >= 0, got {getattr(self, name)}.")
