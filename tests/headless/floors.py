"""The compute floor a FLUX.1 note gives beside its hand-set time estimate: the run's model FLOPs at a card's bf16
dense Tensor Core peak, the least time no implementation can beat. The estimates were set by hand when the workflows
were written; the floor is counted, so a user can tell how far above it an estimate sits.

One FLUX.1-dev call is the bench's formula (nodes/bench/hiflow_rows.call_flops: 57 blocks, width 3072, 512 T5
tokens; equal to PyTorch's FLOP count of ComfyUI's own Flux at FLUX.1-dev's config within 2e-5, BENCHMARKS.md). A
cascade's FLOPs are its share of one 30-step 4096² pass as the bench prints it (BENCHMARKS.md; HRDiT's as FlexAttention
computes HAP: whole 128x128 tiles). tests/test_note_floors.py holds the formula, the peaks and the shares to the
bench's and every FLUX.1 note to its floor. FLUX.1-Krea-dev's checkpoint has FLUX.1-dev's shapes (ComfyUI loads both
as the same Flux config), so its notes take the same count.
"""

from __future__ import annotations

BLOCKS, WIDTH, TEXT_TOKENS = 57, 3072, 512
#: bf16 dense peaks, FLOP/s: NVIDIA's H100 SXM datasheet (1,979 TFLOPS "with sparsity", half that dense) and Ada
#: whitepaper (RTX 4090, FP32 accumulate) as nodes/bench/model_flops.py cites them.
H100, RTX_4090 = 989.4e12, 165.2e12
#: Each cascade's model FLOPs / one 30-step 4096² pass at FLUX.1-dev's size (`bench --only hiflow`).
SHARES = {"HiFlow": 0.412, "I-Max": 1.244, "HRDiT": 0.172}
BASE_STEPS = 30  # every cascade's 1024² pass from a prompt


def call_flops(width_px: int, height_px: int) -> float:
    """One FLUX.1-dev call at width x height px, batch 1 (projections 24 d² a token, attention 4 d N² a block)."""
    n = (width_px // 16) * (height_px // 16) + TEXT_TOKENS
    return BLOCKS * (24.0 * WIDTH**2 * n + 4.0 * WIDTH * n**2)


def one_pass(width_px: int, height_px: int, steps: int) -> float:
    return steps * call_flops(width_px, height_px)


def cascade(rule: str, base_steps: int = BASE_STEPS) -> float:
    """A cascade at its 4096² defaults; ``base_steps`` < 30: its base pass from an image (img2img on the last ones)."""
    return SHARES[rule] * one_pass(4096, 4096, 30) - (BASE_STEPS - base_steps) * call_flops(1024, 1024)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 200 else f"{seconds / 60:.1f} min" if seconds < 600 else \
        f"{seconds / 60:.0f} min"


def floor_line(flops: float, note: str = "") -> str:
    """The note's bullet: the FLOPs and the least time they take on each card."""
    return (f"- Floor: these model calls are {flops / 1e15:.0f} PFLOP (counted, BENCHMARKS.md{note}); at the bf16 "
            f"dense peak of an H100 they take at least {_duration(flops / H100)}, of an RTX 4090 "
            f"{_duration(flops / RTX_4090)}.")
