"""I-Max's extrapolated-resolution rotary table as numbers: the NTK factor with its clip, and the text positions of
text duplication (arXiv 2410.07536; official code PRIS-CV/I-Max at 3b38c11, transformer_flux.py).

The official ``rope`` builds, on every axis, ω = 1/(θ·f)^(2j/d) (NTK, f = ``ntk_factor``) and then takes, pair by
pair, the larger of it and the position-interpolated ω_PI = (1/θ^(2j/d)) / sqrt((S - 512)/64²), S the tokens of the
call (text + image): high-frequency pairs keep NTK, low-frequency pairs are interpolated by the linear size ratio.
With its 512 text tokens per prompt copy, S - 512 = image tokens + 512·(copies - 1); we count exactly that, so the
table is the official one whatever the host's prompt length (docs/imax.md).
"""

from __future__ import annotations

import math

import torch

#: The official text length per prompt copy (T5 padded to max_sequence_length 512).
OFFICIAL_TEXT_TOKENS = 512


def clip_tokens(image_tokens: int, copies: int = 1, text_tokens: int = OFFICIAL_TEXT_TOKENS) -> int:
    """The official S - 512: the call's image tokens plus the duplicated prompts beyond the first."""
    if image_tokens < 1 or copies < 1:
        raise ValueError(f"I-Max's NTK clip needs image tokens and copies >= 1, got {image_tokens}, {copies}.")
    return int(image_tokens) + int(text_tokens) * (int(copies) - 1)


def imax_frequencies(dim: int, theta: float, factor: float, tokens: int, trained_tokens: float,
                     device: torch.device | str | None = None) -> torch.Tensor:
    """float64 (dim/2,): max(1/(θ·f)^(2j/d), 1/θ^(2j/d) / sqrt(tokens / trained_tokens)).

    ``tokens`` is ``clip_tokens`` of the call, ``trained_tokens`` the trained image tokens (64² for FLUX.1)."""
    if dim % 2 or dim < 2:
        raise ValueError(f"I-Max: a RoPE axis needs an even dimension, got {dim}.")
    if factor <= 0 or theta <= 0:
        raise ValueError(f"I-Max: theta and the NTK factor must be > 0, got theta={theta}, factor={factor}.")
    if tokens < 1 or trained_tokens < 1:
        raise ValueError(f"I-Max: token counts must be >= 1, got {tokens} and {trained_tokens}.")
    exponent = torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
    ntk = 1.0 / (float(theta) * float(factor)) ** exponent
    interpolated = 1.0 / float(theta) ** exponent / math.sqrt(tokens / trained_tokens)
    return torch.maximum(ntk, interpolated)


def duplicated_text_ids(text_ids: torch.Tensor, copies: tuple[int, int], trained_grid: tuple[int, int],
                        columns: tuple[int, int] = (1, 2)) -> torch.Tensor:
    """(B, L, n) text ids of one prompt -> (B, L·kh·kw, n): copy (i, j), row-major, moved by i·trained rows on the
    row column and j·trained cols on the column column (the official offsets, 64 for FLUX.1)."""
    kh, kw = copies
    row, col = columns
    parts = []
    for i in range(kh):
        for j in range(kw):
            part = text_ids.clone()
            part[..., row] = part[..., row] + i * trained_grid[0]
            part[..., col] = part[..., col] + j * trained_grid[1]
            parts.append(part)
    return torch.cat(parts, dim=1)
