"""What a method rule gives the cascade room (room.py), and what the room gives it. HiFlow (hiflow.py) and I-Max
(imax.py) are such rules; HRDiT's is HiFlow's with its own settings and stage models (docs/ARCHITECTURE.md).

The room runs the base pass at the input latent's size on ``base_sigmas`` (Euler, keeping every x0 in the run's
``Predictions`` when ``keeps_predictions``), then asks ``stage`` for each stage's plan and runs it: the stage's
noise (``seed``) scaled onto ``start`` at the first of ``sigmas``, the plan's ``model`` called through ComfyUI's
sampler with the stage's ``guidance``, each step prepared and taken by the plan's ``rule``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch

from ..families import FamilyAdapter
from .predictions import Predictions


class StepRule(Protocol):
    """One stage's steps, in the model's latent space (what ComfyUI's sampler holds)."""

    def prepare(self, x: torch.Tensor, step: int) -> torch.Tensor:
        """The latent the model sees at ``step`` (swin: padded on even steps, cropped back on odd ones)."""

    def step(self, x: torch.Tensor, denoised: torch.Tensor, step: int, sigma: torch.Tensor,
             sigma_next: torch.Tensor) -> torch.Tensor:
        """The latent after ``step``, from the model's x0 prediction ``denoised`` of ``x`` at ``sigma``."""

    def finish(self, x: torch.Tensor) -> torch.Tensor:
        """The stage's result on its own grid (a swin-padded end cropped back)."""


class CascadeSettings(Protocol):
    """What the room reads of every method's settings (each checks its own when made)."""

    steps: int
    cfg: float
    scales: tuple[float, ...]
    stage_steps: tuple[int, ...]
    stage_guidance: tuple[float, ...]

    @property
    def base_steps_run(self) -> int: ...


@dataclass(frozen=True)
class StageContext:
    """What the room knows when a stage begins."""

    index: int  # 0-based
    grid: tuple[int, int]  # the stage's latent rows and columns
    model: Any  # the base pass's MODEL
    adapter: FamilyAdapter
    vae: Any
    previous: torch.Tensor  # the previous pass's result (a LATENT's samples)
    base_sigmas: torch.Tensor
    predictions: Predictions | None
    seed: int
    stage_model: Any | None  # the node's 'stage_model' input


@dataclass(frozen=True)
class StagePlan:
    model: Any  # the MODEL the stage samples
    sigmas: torch.Tensor  # its sigmas, ending in 0
    start: torch.Tensor  # a LATENT's samples: the stage's noise is scaled onto it at sigmas[0]
    rule: StepRule
    guidance: float  # distilled guidance (FLUX.1 / Flux.2 dev); 0 keeps the conditioning's
    seed: int  # the stage's noise


class CascadeMethod(Protocol):
    node: str  # the node's name: the first words of every error
    settings: CascadeSettings
    keeps_predictions: bool  # the base pass and the stages keep their x0 predictions for the stages after them

    def base_sigmas(self, model, adapter: FamilyAdapter, samples: torch.Tensor) -> torch.Tensor:
        """The base pass's schedule (float, ending in 0); the base pass runs its last ``base_steps_run`` steps."""

    def stage(self, context: StageContext) -> StagePlan:
        """The plan of stage ``context.index``."""

    def first_read(self, index: int) -> int | None:
        """The lowest base-schedule index whose prediction stage ``index`` reads (None: it reads none)."""
