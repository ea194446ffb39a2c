"""SPA (HRDiT's Spatial Position Alignment) in the engine: a position rule whose tables the attention averages.

The official code (zylwithxy/HRDiT at e4aa8c6) builds, on an SPA step, one rotary table per bundle variant
(rope/spa.py) at the model's own frequencies (``ntk_factor=1.0``: bundled ids stay in the trained range), and its
attention processor rotates q and k with each, attends, and averages the outputs (``_spa_attention``); blocks that
``set_spa_filter`` leaves out use the ordinary table. Here:

* ``SpaEmbedder`` stands in for the stage model's embedder (whatever it is: ComfyUI's own, the cascade's official
  stage embedder, DyPE / SEGA's ``ExtrapolatingRopeEmbedder``). On an SPA call it builds the ordinary table and
  the variants' tables, leaves them in the call's ``AttentionCall`` and hands the model an identity table, so q
  and k reach the attention unrotated; otherwise it is the embedder it holds.
* spa_attention.py (the attention override) rotates with the right tables per block and averages.

The variants' tables come from the held embedder's ``spa_table`` (the model's own frequencies, with that
embedder's temperatures: the official proportional attention, SEGA's or YaRN's), or from ComfyUI's own embedder
itself. Composition order: SPA replaces the positions (DyPE's or the NTK's frequencies); temperatures stay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from ...rope.spa import bundled_ids
from .devices import math_device
from .scopes import ThreadSlot

logger = logging.getLogger(__name__)

ATTENTION_KEY = "dype_sega_attention"  # transformer_options key of an HRDiT stage clone's AttentionPlan
RUN_STEP_KEY = "dype_sega_run_step"  # transformer_options key of the step's index in its sampling run (counted)
RUN_NOTES_KEY = "dype_sega_run_notes"  # transformer_options key of the run's Notes (attention_clone.py)


@dataclass(frozen=True)
class SpaSettings:
    """SPA's official knobs: bundles per axis and the blocks it is on (None: every block, as ``spa_block_ids``
    None in the official pipeline)."""

    group_num: int = 80
    double_blocks: tuple[int, ...] | None = None
    single_blocks: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.group_num, bool) or not isinstance(self.group_num, int) or self.group_num < 2:
            raise ValueError(f"SPA: group_num must be a whole number >= 2 (bundles per axis), got {self.group_num!r}.")

    def allows(self, block_type: str | None, index: int | None) -> bool:
        chosen = self.double_blocks if block_type == "double" else self.single_blocks
        return chosen is None or index in chosen


@dataclass(frozen=True)
class AttentionPlan:
    """What an HRDiT stage clone carries in ``transformer_options[ATTENTION_KEY]``."""

    spa: SpaSettings | None = None
    spa_steps: tuple[int, int] = (0, 0)  # [start, end) of the stage's steps with SPA (official spa_step_ranges)
    # the inner attention (HAP's), called as kernel(q, k, v, heads, call, options, attend=...): ``attend`` the user's
    # backend as HAP's masked attention (spa_attention.py), or None
    kernel: Callable | None = None

    def spa_on(self, step: int) -> bool:
        return self.spa is not None and self.spa_steps[0] <= step < self.spa_steps[1]


class Notes:
    """The lines one sampling run of an attention clone logs, each once (shared by reference, copies included)."""

    def __init__(self) -> None:
        self.said: set[str] = set()

    def once(self, message: str) -> None:
        if message not in self.said:
            self.said.add(message)
            logger.info(message)

    def __deepcopy__(self, memo: dict) -> Notes:
        return self


@dataclass
class AttentionCall:
    """One model call of an HRDiT stage clone (the wrapper opens it): the plan, the token grid, the tables."""

    plan: AttentionPlan
    spa_on: bool
    grid: tuple[int, int]
    double_blocks: int  # the model's double-stream blocks: single block i is layer double_blocks + i
    tables: tuple[torch.Tensor, list[torch.Tensor]] | None = None  # (ordinary, variants), left by SpaEmbedder
    notes: Notes = field(default_factory=Notes)  # the run's
    # (block type, index) -> the checkpoint's attention function (attention_backend.block_preferences), where no
    # override was set before ours (ComfyUI drops the preference under any override)
    preferred: dict = field(default_factory=dict)

    def layer(self, options: dict) -> int:
        index = int(options.get("block_index", 0))
        return index if options.get("block_type") != "single" else self.double_blocks + index


ATTENTION = ThreadSlot()  # the AttentionCall of the model call running on this thread


def identity_like(table: torch.Tensor) -> torch.Tensor:
    """A rotation table of ``table``'s shape that leaves q and k exactly as they are (cos 1, sin 0)."""
    identity = torch.zeros_like(table)
    identity[..., 0, 0] = 1.0
    identity[..., 1, 1] = 1.0
    return identity


def variant_table_source(inner: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """How ``inner`` builds a variant's table: its ``spa_table``, or ComfyUI's own embedder as it is."""
    method = getattr(inner, "spa_table", None)
    if method is not None:
        return method
    if type(inner).__module__.split(".")[0] == "comfy" and hasattr(inner, "axes_dim"):
        return inner
    raise TypeError(f"SPA cannot build its tables on {type(inner).__module__}.{type(inner).__qualname__}: it is "
                    "neither ComfyUI's own rotary embedder nor one of the pack's (another node replaced it).")


class SpaEmbedder(torch.nn.Module):
    """The stage model's embedder, plus SPA's tables on an SPA call (module docstring)."""

    def __init__(self, inner: torch.nn.Module, spatial_columns: tuple[int, int]) -> None:
        super().__init__()
        self.inner = inner
        self.spatial_columns = tuple(spatial_columns)
        self.variant_table = variant_table_source(inner)
        self.theta = inner.theta
        self.axes_dim = list(inner.axes_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        table = self.inner(ids)
        call = ATTENTION.get()
        if call is None or not call.spa_on:
            return table
        # bundled in float64 where the pack's rule says, then back: small whole numbers (at most group_num), exact
        # in the ids' own dtype
        device = math_device(ids.device)
        variants = [self.variant_table(v.to(device=ids.device, dtype=ids.dtype))
                    for v in bundled_ids(ids, self.spatial_columns, call.grid, call.plan.spa.group_num, device)]
        call.tables = (table, variants)
        return identity_like(table)
