"""What the preview draws: a target size, a family, the steps and the two nodes' settings (node and CLI build it)."""

from __future__ import annotations

from dataclasses import dataclass

from ...rope import PositionSchedule
from ...spectral import SegaSettings
from ..families import ADAPTERS
from ..rope_patch.config import SEGA_ALONE_POSITIONS

# The node's family combo: the models' names as users know them, each for its adapter (PreviewRequest.family).
FAMILY_CHOICES: dict[str, str] = {adapter.display_name: adapter.name for adapter in ADAPTERS}


@dataclass(frozen=True)
class PreviewRequest:
    family: str = "flux"
    width: int = 4096
    height: int = 4096
    steps: int = 28
    shift: float | None = None  # None: the family default
    schedule: PositionSchedule = PositionSchedule()
    base_px: float = 0.0  # 0: the family default
    sega: bool = True
    sega_settings: SegaSettings = SegaSettings()
    sega_alone: bool = False  # SEGA Attention without DyPE (the published recipe): static NTK, ``schedule`` unused

    @property
    def positions(self) -> PositionSchedule:
        """The positions the patched model uses: SEGA alone has static NTK, as the node does."""
        return SEGA_ALONE_POSITIONS if self.sega and self.sega_alone else self.schedule
