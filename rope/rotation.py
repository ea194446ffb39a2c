"""Rotation tables from positions, per-pair frequencies and per-pair attention temperatures.

The layout is the one ComfyUI's ``EmbedND`` returns: ``(..., N, pairs, 2, 2)`` float32 rotation matrices
``[[cos, -sin], [sin, cos]]``, rotating interleaved channel pairs. Angles are float64; cos/sin are rounded to
float32 and *then* multiplied by the temperature in float32, which is bit-for-bit what the official DyPE code does.
"""

from __future__ import annotations

import torch


def rotation_table(
    positions: torch.Tensor,
    freqs: torch.Tensor,
    temperature: torch.Tensor | None = None,
) -> torch.Tensor:
    """Build the rotation table of one axis.

    Args:
        positions: ``(B_p, N)`` token positions on this axis (any real dtype; used in float64 on ``freqs``' device).
        freqs: ``(B_f, pairs)`` float64 angular frequencies (B_f broadcasts against B_p), made by the caller on
            the pack's float64 device (nodes/rope_patch/devices.py).
        temperature: optional ``(B_f, pairs)`` factor applied to cos and sin (so q.k of the pair scales by its
            square); ``None`` means 1 and skips the multiply, keeping plain RoPE bit-exact.

    Returns:
        ``(B, N, pairs, 2, 2)`` float32 with ``B = max(B_p, B_f)``.
    """
    angles = positions.to(device=freqs.device, dtype=torch.float64)[..., :, None] * freqs[..., None, :]
    cos = torch.cos(angles).to(torch.float32)
    sin = torch.sin(angles).to(torch.float32)
    if temperature is not None:
        temp = temperature.to(torch.float32)[..., None, :]
        cos = cos * temp
        sin = sin * temp
    return torch.stack((cos, -sin, sin, cos), dim=-1).unflatten(-1, (2, 2))
