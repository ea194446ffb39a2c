"""What the knobs do, as numbers: per spatial axis, original/used frequency of every RoPE pair across the sampling
steps (the DyPE paper's frequency figure) and the attention temperature per pair (YaRN's scalar or SEGA's band scales
on a synthetic latent), from the same plan and rule as the patched model (rope_patch/axis_plan.py: ``plan_call`` and
``axis_rules``). Pure torch, no ComfyUI."""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from ...rope import plain_frequencies
from ...spectral import latent_spectrum, recipe_rules, token_map_spectrum
from ...spectral.flow_shift import exponential_shift, linear_shift
from ..families import find_adapter
from ..rope_patch.axis_plan import axis_rules, plan_call
from ..rope_patch.config import PatchConfig
from .request import PreviewRequest


def flow_sigmas(steps: int, family: str, shift: float | None = None) -> torch.Tensor:
    """The sigmas of a 'simple' flow schedule with the family's default shift rule (steps + 1 values, last 0):
    Flux's exponential form (mu) or the linear (AuraFlow / SD3 / discrete-flow) form, per ``preview_shift``."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}.")
    rule, default = find_adapter(family).preview_shift
    shift = default if shift is None else shift
    t = torch.linspace(1.0, 0.0, steps + 1, dtype=torch.float64)
    sigma = exponential_shift(t.clamp(min=1e-12), shift) if rule == "exponential" else linear_shift(t, shift)
    sigma[-1] = 0.0
    return sigma


def _synthetic_latents(sigmas: torch.Tensor, grid: tuple[int, int], patch: int, start: int = 0,
                       count: int | None = None) -> torch.Tensor:
    """x_t = (1 - sigma) x0 + sigma noise, x0 a 1/f ("natural image") field: what SEGA sees along a run.

    Steps ``start`` to ``start + count`` only; the field and the noise are the same whatever the chunk.
    """
    gen = torch.Generator().manual_seed(0)
    h, w = grid[0] * patch, grid[1] * patch
    fy = torch.fft.fftfreq(h)[:, None]
    fx = torch.fft.rfftfreq(w)[None, :]
    amplitude = 1.0 / torch.sqrt(fy**2 + fx**2).clamp(min=1.0 / max(h, w))
    phase = torch.rand(16, h, w // 2 + 1, generator=gen) * 2 * math.pi
    x0 = torch.fft.irfft2(amplitude * torch.exp(1j * phase), s=(h, w))
    x0 = (x0 - x0.mean()) / x0.std()
    noise = torch.randn(16, h, w, generator=gen)
    s = sigmas[start:None if count is None else start + count, None, None, None].float()
    return (1 - s) * x0 + s * noise


STEPS_PER_CHUNK = 16  # synthetic latents of at most 16 steps at a time: ~64 MB whatever the step count


def _chunked_spectrum(sigmas: torch.Tensor, grid: tuple[int, int], patch: int, settings):
    """The recipe's spectrum of the synthetic run (one row per step), a few steps at a time so memory does not grow
    with the steps. With no model at hand, "paper" reads the latent's tokens (as "diffusers port") instead of the
    model's patch embedding."""

    def spectrum_of(latents: torch.Tensor):
        if recipe_rules(settings.recipe).spectrum == "latent":
            return latent_spectrum(latents, patch, settings)
        steps, channels, height, width = latents.shape
        tokens = latents.mean(dim=1).reshape(steps, 1, height // patch, patch, width // patch, patch).mean(dim=(3, 5))
        return token_map_spectrum(tokens, settings)

    parts = [spectrum_of(_synthetic_latents(sigmas, grid, patch, start, STEPS_PER_CHUNK))
             for start in range(0, len(sigmas), STEPS_PER_CHUNK)]
    per_sample = ("axis_h", "axis_w", "radial", "spread", "valid")
    return replace(parts[0], **{name: torch.cat([getattr(p, name) for p in parts]) for name in per_sample})


def _config(request: PreviewRequest) -> PatchConfig:
    """The patch the previewed nodes make: DyPE's positions unless SEGA is alone, SEGA's settings if on."""
    config = PatchConfig()
    if not (request.sega and request.sega_alone):
        config = config.with_positions(request.schedule, request.base_px)
    if request.sega:
        config = config.with_sega(request.sega_settings, request.base_px)
    return config


def schedule_curves(request: PreviewRequest) -> dict:
    """Per axis: ratio original/used frequency (steps, pairs) and temperature (steps, pairs), with the plan and the
    rule the patched model runs (rope_patch/axis_plan.py: ``plan_call``, ``axis_rules``)."""
    adapter = find_adapter(request.family)
    axis_dim, theta = adapter.spatial_axis_dim(), adapter.theta
    grid = (max(1, round(request.height / adapter.px_per_token)), max(1, round(request.width / adapter.px_per_token)))
    config = _config(request)
    base_grid = adapter.base_grid(request.base_px, grid)
    sigmas = flow_sigmas(request.steps, request.family, request.shift)[:-1]
    original = plain_frequencies(axis_dim, theta)
    plans = plan_call(config, adapter, grid)
    if plans is not None:  # the trained size the plan uses (SEGA "paper" on Qwen-Image: the official code's 1024)
        base_grid = tuple(plan.base_tokens for plan in plans)
    spectrum = None
    if request.sega and plans is not None:
        # Profiles only depend on the grid, so a coarser synthetic grid with the same token aspect keeps this fast
        # (at most 256 latent pixels per side, whatever the patch: Chroma Radiance's tokens are 16 pixels wide).
        preview_grid = tuple(min(n, max(8, 256 // adapter.patch_size)) for n in grid)
        spectrum = _chunked_spectrum(sigmas, preview_grid, adapter.patch_size, request.sega_settings)
    rules = None if plans is None else axis_rules(config, plans, adapter.axes_dim, theta, sigmas, spectrum)
    axes = {}
    for index, (name, n) in enumerate((("rows", grid[0]), ("columns", grid[1]))):
        freqs, temperature = (original[None], None) if rules is None else rules[index]
        freqs = freqs.expand(len(sigmas), -1)
        scale = grid[index] / base_grid[index] if plans is None else plans[index].scale
        axes[name] = {"tokens": n, "scale": scale, "ratio": original / freqs,
                      "temperature": torch.ones_like(freqs) if temperature is None else temperature.expand_as(freqs)}
    return {"sigmas": sigmas, "axes": axes, "grid": grid, "base_tokens": max(base_grid), "base_grid": base_grid}
