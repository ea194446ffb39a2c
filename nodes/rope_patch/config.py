"""The patch configuration a clone carries in ``model_options["transformer_options"][CONFIG_KEY]``.

Why there: ``ModelPatcher.clone()`` deep-copies ``model_options`` but shares object-patched modules between clones,
so settings must live with the clone and the replacement embedder must hold none. The value is an immutable
dataclass; each node writes a new one, so no clone ever sees another clone's edit.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...rope import PositionSchedule

if TYPE_CHECKING:
    from ...spectral import SegaSettings

logger = logging.getLogger(__name__)

CONFIG_KEY = "dype_sega"
WRAPPER_KEY = "dype_sega"

# Profiler labels (torch.profiler.record_function) on the engine's per-call work: a profile of a run counts and times
# them (the bench does), nothing patches the engine to see it. dynamo treats the labels as no-ops: no graph break.
LABEL_SCHEDULE = "dype_sega.schedule"  # one call's frequencies and temperatures (schedule.build_call_scope)
LABEL_SPECTRUM = "dype_sega.spectrum"  # SEGA's spectrum of a latent (spectrum.compute_spectrum), at most once a step
LABEL_TABLE = "dype_sega.table"  # one rotary table (the replacement embedder's forward)

#: What SEGA uses for positions when no DyPE node set any: static NTK, as the published SEGA ports do.
SEGA_ALONE_POSITIONS = PositionSchedule(method="ntk", dynamic=False)


@dataclass(frozen=True)
class PatchConfig:
    """Positions come from "DyPE Patch Model", the temperature rule from "SEGA Attention"; either may be absent."""

    positions: PositionSchedule | None = None
    sega: SegaSettings | None = None
    positions_base_px: float = 0.0  # 0 = the family default
    sega_base_px: float = 0.0
    # The trained long side of the checkpoint variant each node names (0: "auto", the family default).
    positions_variant_px: float = 0.0
    sega_variant_px: float = 0.0

    @property
    def effective_positions(self) -> PositionSchedule:
        if self.positions is not None:
            return self.positions
        return SEGA_ALONE_POSITIONS if self.sega is not None else PositionSchedule(method="off")

    def base_px(self, family_default: float) -> float:
        """The trained resolution: a ``base_resolution`` wins over a ``variant``, DyPE's over SEGA's, so node order
        never matters."""
        for value in (self.positions_base_px, self.sega_base_px, self.positions_variant_px, self.sega_variant_px):
            if value > 0:
                return value
        return family_default

    def with_positions(self, schedule: PositionSchedule, base_px: float, variant_px: float = 0.0) -> PatchConfig:
        return replace(self, positions=schedule, positions_base_px=_trained_px(base_px),
                       positions_variant_px=float(variant_px))

    def with_sega(self, settings: SegaSettings, base_px: float, variant_px: float = 0.0) -> PatchConfig:
        return replace(self, sega=settings, sega_base_px=_trained_px(base_px), sega_variant_px=float(variant_px))


def _trained_px(value: float) -> float:
    """A trained resolution from Python (the nodes apply their widget's rule first: nodes/inputs/ranges.py)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"base_resolution must be 0 (the family default) or a trained resolution in px > 0; "
                         f"got {value!r}.")
    return float(value)


def read_config(transformer_options: dict) -> PatchConfig | None:
    value = transformer_options.get(CONFIG_KEY)
    return value if isinstance(value, PatchConfig) else None
