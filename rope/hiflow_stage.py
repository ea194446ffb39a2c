"""HiFlow's high-resolution stage model as numbers: the static NTK theta and proportional attention.

The official code (Bujiazi/HiFlow da351a8, transformer_flux.py and utils.py) builds the stages' rotary table with
theta x ntk_factor on every axis and sets the attention softmax scale to sqrt(log_T(N) / head_dim), N the tokens
attended (text + image) and T = 4608 (512 text + 64² image tokens, FLUX.1 at 1024²). A temperature m on the rotary
table multiplies both q and k, so it scales the logits by m²: proportional attention is m = log_T(N)^(1/4) on every
row of the table, text rows included.
"""

from __future__ import annotations

import math

#: The official T: 512 text tokens + the 64² image tokens of FLUX.1 at 1024².
OFFICIAL_TEXT_TOKENS = 512


def ntk_theta(theta: float, factor: float) -> float:
    """The stages' RoPE base: theta x factor on every axis (factor 1 = the model's own)."""
    if factor <= 0:
        raise ValueError(f"HiFlow's NTK factor must be > 0, got {factor}.")
    return float(theta) * float(factor)


def trained_attention_tokens(trained_image_tokens: float, text_tokens: int = OFFICIAL_TEXT_TOKENS) -> float:
    """T of proportional attention: the trained image tokens plus 512 text tokens (4608 for FLUX.1, the official
    constant; the same rule for every family, docs/hiflow.md)."""
    return float(trained_image_tokens) + float(text_tokens)


def proportional_temperature(tokens: int, trained_tokens: float) -> float:
    """m with m² = sqrt(log_T(N)): the rotary-table factor that turns 1/sqrt(d) into sqrt(log_T(N) / d)."""
    if tokens < 2 or trained_tokens < 2:
        raise ValueError(f"proportional attention needs N, T >= 2 tokens, got N={tokens}, T={trained_tokens}.")
    return (math.log(tokens) / math.log(trained_tokens)) ** 0.25
