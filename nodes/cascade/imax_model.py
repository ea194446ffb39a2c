"""I-Max's official stage model on a clone: the rotary table with the NTK factor and its clip (rope/imax_stage.py),
times the proportional-attention temperature, and text duplication (the prompt repeated once per trained grid
that fits, each copy's text positions moved by one trained grid).

The clone carries an object patch (the embedder) and a keyed APPLY_MODEL wrapper. The wrapper knows the call's
latent, so it repeats the call's text stream and puts the call's facts (token grid, copies, one prompt's length)
in a thread-local slot for exactly that call; the embedder reads them there. Nothing is stored on the shared
model, the original embedder or the module: the input MODEL is untouched.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ...rope.hiflow_stage import proportional_temperature, trained_attention_tokens
from ...rope.imax_stage import clip_tokens, duplicated_text_ids, imax_frequencies
from ...spectral.imax import text_copies
from ..families import FamilyAdapter, UnsupportedModelError
from ..rope_patch.config import read_config
from ..rope_patch.devices import math_device
from ..rope_patch.reload import add_reload
from ..rope_patch.scopes import AxisSchedule
from ..rope_patch.tables import embed_ids
from .families import FLUX1_FAMILIES, trained_grid
from .imax_settings import NODE
from .stage_rope import stage_rope

logger = logging.getLogger(__name__)

WRAPPER_KEY = "dype_sega.imax_stage"


@dataclass(frozen=True)
class ImaxCall:
    """One model call: the image's token grid, the prompt copies (down, across) and one prompt's text length."""

    grid: tuple[int, int]
    copies: tuple[int, int]
    text_tokens: int


_CALL = threading.local()


@contextmanager
def _holding(call: ImaxCall) -> Iterator[None]:
    previous = getattr(_CALL, "value", None)
    _CALL.value = call
    try:
        yield
    finally:
        _CALL.value = previous


class ImaxStageEmbedder(torch.nn.Module):
    """Stands in for ComfyUI's EmbedND on the stage clone: I-Max's frequencies on every axis, every row times the
    proportional temperature m (q·k scales by m² = sqrt(log_T N), N the call's tokens), the copies' text rows
    moved. It holds the original (used as it is outside the clone's calls) and four numbers."""

    def __init__(self, original: torch.nn.Module, factor: float, trained: tuple[float, float],
                 proportional: bool, pe_unsqueeze_dim: int) -> None:
        super().__init__()
        self.original = original
        self.theta = float(original.theta)
        self.axes_dim = list(original.axes_dim)
        self.factor = float(factor)
        self.trained = trained
        self.proportional = bool(proportional)
        self.pe_unsqueeze_dim = pe_unsqueeze_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        call = getattr(_CALL, "value", None)
        if call is None:  # a call that did not come through the clone's wrapper (the object patch outlives a run
            return self.original(ids)  # until ComfyUI loads another clone): the model's own table
        copies = call.copies[0] * call.copies[1]
        if copies > 1:
            text = copies * call.text_tokens
            moved = duplicated_text_ids(ids[:, :call.text_tokens], call.copies, tuple(int(t) for t in self.trained))
            ids = torch.cat([moved.to(ids.dtype), ids[:, text:]], dim=1)
        tokens = clip_tokens(call.grid[0] * call.grid[1], copies)
        trained_tokens = self.trained[0] * self.trained[1]
        m = proportional_temperature(int(ids.shape[1]), trained_attention_tokens(trained_tokens)) \
            if self.proportional else 1.0
        device = math_device(ids.device)  # the pack's float64 rule: the CPU where the ids' device has none
        axes = []
        for column, dim in enumerate(self.axes_dim):
            freqs = imax_frequencies(dim, self.theta, self.factor, tokens, trained_tokens, device=device)[None]
            temperature = None if m == 1.0 else torch.full_like(freqs, m)
            axes.append(AxisSchedule(column=column, freqs=freqs, temperature=temperature))
        return embed_ids(ids, self.axes_dim, self.theta, tuple(axes), self.pe_unsqueeze_dim, device)


def _stage_call_wrapper(adapter: FamilyAdapter, trained: tuple[float, float], duplicate: bool):
    """The APPLY_MODEL wrapper of the clone: the call's facts for the embedder, the text repeated per copy."""

    def wrapper(executor, x, t, c_concat=None, c_crossattn=None, control=None, transformer_options=None, **kwargs):
        grid = adapter.token_grid(x)
        copies = text_copies(grid[0], grid[1], round(trained[0]), round(trained[1])) if duplicate else (1, 1)
        text_tokens = 0 if c_crossattn is None else int(c_crossattn.shape[1])
        if copies != (1, 1):
            if kwargs.get("attention_mask") is not None:
                raise UnsupportedModelError("I-Max Cascade: text duplication cannot repeat a text attention mask; "
                                            "turn 'text_duplication' off for this conditioning.")
            c_crossattn = c_crossattn.repeat(1, copies[0] * copies[1], 1)
        with _holding(ImaxCall(grid=grid, copies=copies, text_tokens=text_tokens)):
            return executor(x, t, c_concat, c_crossattn, control, transformer_options, **kwargs)

    return wrapper


def imax_stage_model(model, adapter: FamilyAdapter, factor: float, proportional: bool, duplicate: bool,
                     trained: tuple[float, float] | None = None):
    """A clone of ``model`` with I-Max's stage table, attention scale and text duplication. ``trained`` (token
    rows, cols of the trained size) defaults to the family's cited one; tests pass smaller grids."""
    import comfy.patcher_extension

    name = type(model.model).__name__
    if read_config(model.model_options.get("transformer_options", {})) is not None:
        raise UnsupportedModelError(
            f"I-Max Cascade: the 'model' input ({name}) is already patched by DyPE / SEGA, so the official stage "
            "patch (NTK x factor, proportional attention) would replace theirs. Connect the patched model to "
            "'stage_model' (the stages then use it as it is) and the unpatched one to 'model'.")
    rope = stage_rope(model, adapter, NODE)
    if duplicate and adapter.name not in FLUX1_FAMILIES:
        raise UnsupportedModelError(
            f"I-Max Cascade: text duplication is written for FLUX.1's text positions (all zero); "
            f"{adapter.display_name} ({name}) places its text otherwise. Turn 'text_duplication' off.")
    trained = trained or trained_grid(adapter, model)
    clone = model.clone()
    stage = ImaxStageEmbedder(rope.source, factor, trained, proportional, adapter.pe_unsqueeze_dim)
    clone.add_object_patch(adapter.embedder_attr, rope.fit(stage))
    add_reload(clone)  # outside the call wrapper below: memory freed mid-stage (rope_patch/reload.py)
    clone.add_wrapper_with_key(comfy.patcher_extension.WrappersMP.APPLY_MODEL, WRAPPER_KEY,
                               _stage_call_wrapper(adapter, trained, duplicate))
    logger.debug("I-Max stage model for %s: NTK x %s with the clip, proportional attention %s, text duplication "
                 "%s (trained grid %s)", name, factor, proportional, duplicate, trained)
    return clone
