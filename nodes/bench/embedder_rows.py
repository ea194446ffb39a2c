"""The per-model-call table: the replacement embedder against ComfyUI's EmbedND on the ids Flux and Qwen-Image build.
(That the tables are right is the tests' job: tests/test_dype_host.py and the parity tests.)"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from ...rope import PositionSchedule
from ..families import find_adapter
from ..rope_patch.config import PatchConfig
from ..rope_patch.embedder import ExtrapolatingRopeEmbedder
from ..rope_patch.schedule import build_call_scope
from ..rope_patch.scopes import CALL
from ..rope_patch.token_maps import _linear_rows
from .model import FLUX_AXES, REFINED, THETA
from .timing import median_ms, peak_mib

TEXT_TOKENS = 512  # T5 tokens of Flux/Qwen prompts as ComfyUI pads them
SIGMA = 0.7  # a mid-schedule flow time: the dynamic schedules are fully active


def flux_ids(batch: int, tokens: int, device: torch.device) -> torch.Tensor:
    """Flux.1: text ids 0, then (0, row, col) from 0 (comfy/ldm/flux/model.py)."""
    img = torch.zeros(tokens, tokens, 3, device=device)
    img[..., 1] = torch.arange(tokens, device=device, dtype=torch.float32)[:, None]
    img[..., 2] = torch.arange(tokens, device=device, dtype=torch.float32)[None]
    ids = torch.cat([torch.zeros(TEXT_TOKENS, 3, device=device), img.reshape(-1, 3)])
    return ids[None].repeat(batch, 1, 1)


def qwen_ids(batch: int, tokens: int, device: torch.device) -> torch.Tensor:
    """Qwen-Image: text on the diagonal from max(h, w) // 2, then the image centred (comfy/ldm/qwen_image)."""
    img = torch.zeros(tokens, tokens, 3, device=device)
    centred = torch.arange(tokens, device=device, dtype=torch.float32) - tokens // 2
    img[..., 1] = centred[:, None]
    img[..., 2] = centred[None]
    text = torch.arange(tokens // 2, tokens // 2 + TEXT_TOKENS, device=device, dtype=torch.float32)
    ids = torch.cat([text[:, None].expand(-1, 3), img.reshape(-1, 3)])
    return ids[None].repeat(batch, 1, 1)


@dataclasses.dataclass
class Case:
    family: str  # adapter name
    side: int  # pixels
    batch: int

    @property
    def tokens(self) -> int:
        return self.side // 16

    @property
    def label(self) -> str:
        return f"{'Flux' if self.family == 'flux' else 'Qwen'} {self.side}² B{self.batch}"


def embedder_row(case: Case, repeats: int, device: torch.device, memory: bool) -> dict[str, float]:
    from comfy.ldm.flux.layers import EmbedND


    adapter = find_adapter(case.family)
    stock = EmbedND(dim=128, theta=THETA, axes_dim=FLUX_AXES)
    ours = ExtrapolatingRopeEmbedder(stock)
    ids = (flux_ids if case.family == "flux" else qwen_ids)(case.batch, case.tokens, device)
    shape = (case.batch, 16, 2 * case.tokens, 2 * case.tokens)
    x = torch.randn((*shape[:2], 1, *shape[2:]) if case.family == "qwen_image" else shape, device=device)
    sigma = torch.full((case.batch,), SIGMA, device=device)

    def call(config: PatchConfig) -> Callable[[], torch.Tensor]:
        def run() -> torch.Tensor:  # the whole per-call work of ours: schedule (+ SEGA spectrum) and table
            scope = build_call_scope(config, adapter, ours, x, sigma)
            with CALL.holding(scope):
                return ours(ids)

        return run

    def dype(method: str) -> PatchConfig:
        return PatchConfig().with_positions(PositionSchedule(method=method), 0)

    fns = {
        "stock": lambda: stock(ids),
        "yarn": call(dype("yarn")),
        "ntk": call(dype("ntk")),
        "pi": call(dype("pi")),
        "sega": call(dype("yarn").with_sega(REFINED, 0)),
        "embed": _embedding_pass(case, x),
        "floor": lambda: torch.empty((case.batch, 1, ids.shape[1], 64, 2, 2), device=device).fill_(1.0),
    }
    with torch.no_grad():
        row = median_ms(fns, repeats, device)
        if memory:
            row["mem_stock"] = peak_mib(fns["stock"], device)
            row["mem_ours"] = peak_mib(fns["yarn"], device)
            row["mem_sega"] = peak_mib(fns["sega"], device)
    return row


def _embedding_pass(case: Case, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """SEGA "paper"'s extra per step: the channel mean of the patch embedding over the latent, through a layer of the
    production size (Flux.1 / Qwen-Image img_in: Linear 64 -> 3072, ComfyUI's own op class)."""
    import comfy.ops


    layer = comfy.ops.disable_weight_init.Linear(64, 3072, device=x.device)
    with torch.no_grad():
        layer.weight.normal_(0.0, 0.02)
        layer.bias.zero_()
    frames = x if x.dim() == 5 else x[:, :, None]
    return lambda: _linear_rows(layer, frames, 2, "c ph pw")
