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
from .model import FLUX_AXES, PAPER, REFINED, THETA, boot, embedding_model
from .peak_memory import Peak, allocator_peak_mib, in_child, record_peak_mib, resident_gauge_problem, resident_peak_mib
from .timing import median_ms

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


def case_calls(case: Case, device: torch.device) -> tuple[dict[str, Callable[[], torch.Tensor]], bool]:
    """The row's variants as calls on one set of inputs, and whether the pack leaves this case's table to stock (at
    or below the trained size the plan is empty: ours runs ComfyUI's own embedder)."""
    from comfy.ldm.flux.layers import EmbedND

    adapter = find_adapter(case.family)
    stock = EmbedND(dim=128, theta=THETA, axes_dim=FLUX_AXES)
    ours = ExtrapolatingRopeEmbedder(stock)
    ids = (flux_ids if case.family == "flux" else qwen_ids)(case.batch, case.tokens, device)
    shape = (case.batch, 16, 2 * case.tokens, 2 * case.tokens)
    x = torch.randn((*shape[:2], 1, *shape[2:]) if case.family == "qwen_image" else shape, device=device)
    sigma = torch.full((case.batch,), SIGMA, device=device)

    base_model = embedding_model(case.family, device)

    def call(config: PatchConfig) -> Callable[[], torch.Tensor]:
        def run() -> torch.Tensor:  # the whole per-call work of ours: schedule (+ SEGA spectrum) and table
            scope = build_call_scope(config, adapter, ours, x, sigma, base_model=base_model)
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
        "paper": call(PatchConfig().with_sega(PAPER, 0)),  # SEGA Attention alone, on its defaults
        "dype_paper": call(dype("yarn").with_sega(PAPER, 0)),  # DyPE -> SEGA, both on their defaults
        "floor": lambda: torch.empty((case.batch, 1, ids.shape[1], 64, 2, 2), device=device).fill_(1.0),
    }
    return fns, build_call_scope(dype("yarn"), adapter, ours, x, sigma) is None


def embedder_row(case: Case, repeats: int, device: torch.device) -> tuple[dict[str, float], bool]:
    """Median ms of every variant, interleaved; and whether ours is stock's code path here."""
    fns, stock_path = case_calls(case, device)
    with torch.no_grad():
        return median_ms(fns, repeats, device), stock_path


MEMORY_VARIANTS = ("stock", "yarn", "sega", "paper", "dype_paper")


def memory_row(case: Case, device: torch.device) -> dict[str, Peak]:
    """Peak extra memory of one call of stock and each variant of ours (MEMORY_VARIANTS), by both gauges (peak_memory.py). On the CPU the
    second gauge runs in a process of its own (``resident_peaks``)."""
    fns, _ = case_calls(case, device)
    record = {}
    with torch.no_grad():
        for name in MEMORY_VARIANTS:
            fns[name]()  # warm: first-call work and the shape caches are not one call's memory
            record[name] = record_peak_mib(fns[name], device)
        if device.type == "cuda":
            return {name: Peak(record[name], allocator_peak_mib(fns[name], device), "CUDA allocator's peak")
                    for name in MEMORY_VARIANTS}
    problem = resident_gauge_problem()
    if problem:
        return {name: Peak(record[name], None, problem) for name in MEMORY_VARIANTS}
    resident = in_child(__name__, "resident_peaks", {"family": case.family, "side": case.side, "batch": case.batch,
                                                     "threads": torch.get_num_threads()})
    return {name: Peak(record[name], resident[name], "resident pages' peak") for name in MEMORY_VARIANTS}


def resident_peaks(payload: dict) -> dict[str, float]:
    """In the gauge's own process (peak_memory.in_child): boot ComfyUI on the CPU and measure each variant's peak
    resident pages, each call warmed first."""
    torch.set_num_threads(payload["threads"])
    boot()
    fns, _ = case_calls(Case(payload["family"], payload["side"], payload["batch"]), torch.device("cpu"))
    peaks = {}
    with torch.no_grad():
        for name in MEMORY_VARIANTS:
            fns[name]()
            peaks[name] = resident_peak_mib(fns[name])
    return peaks


def paper_flops(case: Case, device: torch.device) -> tuple[float, float, float]:
    """Recipe paper's per-step work in FLOPs, counted twice: one SEGA-paper call under PyTorch's FlopCounterMode (its
    matrix work is the patch embedding; an FFT and the trig have no FLOP formula there and are below it by orders),
    and by the formula batch x tokens x 64 x 3072 x 2; beside one FLUX.1-dev model call at the case's size
    (hiflow_rows.call_flops: 57 blocks, 512 text tokens, times the batch)."""
    from torch.utils.flop_counter import FlopCounterMode

    from .hiflow_rows import call_flops

    fns, _ = case_calls(case, device)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        fns["paper"]()
    tokens = case.tokens**2
    return float(counter.get_total_flops()), case.batch * tokens * 64 * 3072 * 2.0, case.batch * call_flops(tokens)
