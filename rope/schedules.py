"""Per-axis RoPE frequency schedules: plain, PI, NTK and the YaRN two-stage ramp, static or DyPE-dynamic.

Everything here is float64 torch and works on a *tensor* flow time ``t`` (any shape), on ``t``'s device: the caller
puts ``t`` where the pack's float64 rule says (nodes/rope_patch/devices.py), so the per-step path never syncs with
the host. The result has shape ``t.shape + (axis_dim // 2,)``: one angular frequency per rotation pair, pair 0 being
the highest frequency.

Conventions (DyPE, arXiv 2510.20766; official code github guyyariv/DyPE):

* ``scale`` is the per-axis ratio ``tokens on the axis / trained tokens on the axis``; an axis with
  ``scale <= 1`` always gets plain RoPE.
* ``t`` is the flow time (sigma, 1 = pure noise). It is clamped to [0, 1]: ``t > 1`` behaves as pure noise and
  ``t <= 0`` as a clean image, where every dynamic schedule returns the original RoPE frequencies.
* DyPE modulation ``kappa(t) = t ** lambda_t``:
    - yarn: the four ramp thresholds (beta0, beta1, gamma0, gamma1) are multiplied by kappa (official HEAD), or
      raised to ``lambda_s * kappa`` in the ``"power"`` variant (official code before 2026-02-24, "v1");
    - ntk: the NTK base factor is raised to ``lambda_s * kappa`` (official);
    - pi (ours; official DyPE has no PI): the interpolation factor is ``scale ** kappa``, so pure noise is exactly
      static PI (positions compressed by ``s``) and t = 0 plain RoPE; ``lambda_s`` is not used (with the shared
      default 2 it would compress by ``s ** 2`` at pure noise, 16x at 4096^2 on Flux).
  Dynamic factors never drop below 1, so the schedule never *contracts* the original RoPE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from .methods import METHODS, THRESHOLD_RULES

Method = Literal["yarn", "ntk", "pi", "off"]
ThresholdRule = Literal["multiply", "power"]



@dataclass(frozen=True)
class PositionSchedule:
    """How positions are extrapolated on the spatial axes. Immutable: it is shared by model clones."""

    method: Method = "yarn"
    dynamic: bool = True
    lambda_t: float = 2.0
    lambda_s: float = 2.0
    yarn_beta: tuple[float, float] = (1.25, 0.75)
    yarn_gamma: tuple[float, float] = (16.0, 2.0)
    threshold_rule: ThresholdRule = "multiply"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"Unknown RoPE method {self.method!r}; expected one of {', '.join(METHODS)}.")
        if self.threshold_rule not in THRESHOLD_RULES:
            raise ValueError(f"Unknown threshold rule {self.threshold_rule!r}; expected one of "
                             f"{', '.join(THRESHOLD_RULES)}.")
        for name in ("lambda_t", "lambda_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")


def _exponents(axis_dim: int, device: torch.device | None) -> torch.Tensor:
    """2k/d for k < d/2, float64 (the exponent of theta for pair k)."""
    if axis_dim <= 0 or axis_dim % 2:
        raise ValueError(f"A RoPE axis needs an even, positive dimension; got {axis_dim}.")
    return torch.arange(0, axis_dim, 2, dtype=torch.float64, device=device) / axis_dim


def _constant(values: tuple[float, ...], device: torch.device | None) -> torch.Tensor:
    """float64 ``values`` made on ``device`` by fill kernels: ``torch.tensor(values, device=cuda)`` would copy them
    from host memory, which CUDA synchronizes (a host sync at every step)."""
    return torch.stack([torch.full((), float(v), dtype=torch.float64, device=device) for v in values])


def plain_frequencies(axis_dim: int, theta: float, device: torch.device | None = None) -> torch.Tensor:
    """Original RoPE: omega_k = theta ** (-2k/d), exactly as ComfyUI's ``flux.math.rope`` computes it."""
    return 1.0 / (theta ** _exponents(axis_dim, device))


def yarn_temperature(scale: float) -> float:
    """YaRN's attention temperature 0.1 ln s + 1 (1 for an unscaled axis)."""
    return 1.0 if scale <= 1.0 else 0.1 * math.log(scale) + 1.0


def kappa(t: torch.Tensor, lambda_t: float) -> torch.Tensor:
    """DyPE time modulation kappa(t) = t ** lambda_t on t clamped to [0, 1] (float64)."""
    return t.to(device=t.device, dtype=torch.float64).clamp(0.0, 1.0) ** lambda_t


def _correction_factor(rotations: torch.Tensor, axis_dim: int, theta: float, base_tokens: int) -> torch.Tensor:
    """Pair index at which a wavelength spans ``rotations`` turns over the trained length (YaRN's inverse-dim formula).

    ``rotations == 0`` (DyPE at t = 0) gives +inf, which the clamps below turn into "every pair is high-frequency".
    """
    return axis_dim * torch.log(base_tokens / (rotations * (2 * math.pi))) / (2 * math.log(theta))


def _ramp_blend(
    high_freqs: torch.Tensor,
    low_freqs: torch.Tensor,
    rotations: tuple[torch.Tensor, torch.Tensor],
    axis_dim: int,
    theta: float,
    base_tokens: int,
) -> torch.Tensor:
    """Blend two frequency vectors: ``high_freqs`` below the ramp (fast pairs), ``low_freqs`` above it.

    The ramp is YaRN's ``linear_ramp_mask`` between the pair indices where a wavelength makes ``rotations[0]`` and
    ``rotations[1]`` turns over the trained length. It is evaluated in float32, as the official code does, so that
    the blended frequencies agree with it to the last bit instead of to 1e-8 (the blend weights are float64).
    """
    pairs = axis_dim // 2
    low = torch.floor(_correction_factor(rotations[0], axis_dim, theta, base_tokens)).clamp(0, axis_dim - 1)
    high = torch.ceil(_correction_factor(rotations[1], axis_dim, theta, base_tokens)).clamp(0, axis_dim - 1)
    high = high.clamp(max=pairs)
    # Deliberate deviation: at tiny t the official code can end with low > high (low is never clipped to d/2), which
    # inverts the ramp and flips every pair back to the other frequency set. Clipping low to high keeps the schedule
    # monotone, so t -> 0 converges to the original RoPE. Identical to the official values whenever low <= high.
    # With lambda_t = 2, 56-dim axes and 4096 px that is every t > 0.02422 on Flux's 64-token base (t > 0.02758 on
    # Qwen-Image's 83). Below, official DyPE compresses every pair by s again (PI) for t < 0.00677 (Qwen: 0.00771),
    # where ours is plain RoPE; for 0.0111 < t < 0.02422 (Qwen: 0.0126..0.02758) the beta ramp differs by up to
    # 2.6% in the slowest pairs (22..27). 'simple' never gets there (last sigma > 0.1 at 28 steps); with Flux's sigma_min,
    # karras has t <= 0.00677 at 7 of 28 steps and exponential at 11.
    low = torch.minimum(low, high)
    high = torch.where(low == high, high + 0.001, high)
    index = torch.arange(pairs, dtype=torch.float32, device=high_freqs.device)
    ramp = ((index - low.to(torch.float32)[..., None]) / (high - low).to(torch.float32)[..., None]).clamp(0, 1)
    keep_high = 1 - ramp.to(device=high_freqs.device, dtype=torch.float64)
    return low_freqs * (1 - keep_high) + high_freqs * keep_high


def axis_frequencies(
    schedule: PositionSchedule,
    axis_dim: int,
    theta: float,
    scale: float,
    base_tokens: int,
    t: torch.Tensor,
) -> torch.Tensor:
    """Angular frequency of every rotation pair of one spatial axis at flow time ``t``.

    Returns float64 of shape ``t.shape + (axis_dim // 2,)``.
    """
    device = t.device
    batch_shape = t.shape
    base = plain_frequencies(axis_dim, theta, device)
    if schedule.method == "off" or scale <= 1.0:
        return base.expand(*batch_shape, -1)

    scale_t = _constant((scale,), device)[0]
    exponents = _exponents(axis_dim, device)
    k = kappa(t, schedule.lambda_t) if schedule.dynamic else torch.ones(batch_shape, dtype=torch.float64, device=device)

    if schedule.method == "ntk":
        ntk_base = scale_t ** (axis_dim / (axis_dim - 2))
        factor = ntk_base ** (schedule.lambda_s * k) if schedule.dynamic else ntk_base.expand(batch_shape)
        factor = factor.clamp(min=1.0)
        return 1.0 / ((theta * factor)[..., None] ** exponents)

    if schedule.method == "pi":
        factor = scale_t**k if schedule.dynamic else scale_t.expand(batch_shape)
        factor = factor.clamp(min=1.0)
        return 1.0 / (factor[..., None] * theta**exponents)

    # YaRN, two stages: PI <-> NTK between beta, then that <-> original RoPE between gamma.
    theta_pow = theta**exponents
    linear = 1.0 / (scale_t * theta_pow)
    ntk = 1.0 / (theta * scale_t ** (axis_dim / (axis_dim - 2))) ** exponents

    def thresholds(pair: tuple[float, float]) -> tuple[torch.Tensor, torch.Tensor]:
        values = _constant(pair, device)
        if not schedule.dynamic:
            values = values.expand(*batch_shape, 2)
        elif schedule.threshold_rule == "multiply":
            values = values * k[..., None]
        else:
            values = values ** (schedule.lambda_s * k[..., None])
        return values[..., 0], values[..., 1]

    blended = _ramp_blend(ntk, linear, thresholds(schedule.yarn_beta), axis_dim, theta, base_tokens)
    return _ramp_blend(base, blended, thresholds(schedule.yarn_gamma), axis_dim, theta, base_tokens)
