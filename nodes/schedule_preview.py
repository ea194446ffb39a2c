"""Draw what the knobs do: per spatial axis, original/used frequency of every RoPE pair across the sampling steps
(the DyPE paper's frequency figure) and the attention temperature per pair (YaRN's scalar or SEGA's band scales on
a synthetic latent). Pure torch + Pillow, no ComfyUI, so the node and the command line share it.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from ..rope import PositionSchedule, axis_frequencies, plain_frequencies, yarn_attention_scale
from ..spectral import ALLOCATIONS, RECIPES, REFERENCE_RULES, SegaSettings
from .config import SEGA_ALONE_POSITIONS, PatchConfig
from .families import ADAPTERS, find_adapter

logger = logging.getLogger(__name__)
# The node's family combo: the models' names as users know them, each for its adapter (PreviewRequest.family).
FAMILY_CHOICES: dict[str, str] = {adapter.display_name: adapter.name for adapter in ADAPTERS}


@dataclass(frozen=True)
class PreviewRequest:
    family: str = "flux"
    width: int = 4096
    height: int = 4096
    steps: int = 28
    shift: float | None = None  # None: the family default
    schedule: PositionSchedule = PositionSchedule()
    base_px: float = 0.0  # 0: the family default
    sega: bool = True
    sega_settings: SegaSettings = SegaSettings()
    sega_alone: bool = False  # SEGA Attention without DyPE (the published recipe): static NTK, ``schedule`` unused

    @property
    def positions(self) -> PositionSchedule:
        """The positions the patched model uses: SEGA alone has static NTK, as the node does."""
        return SEGA_ALONE_POSITIONS if self.sega and self.sega_alone else self.schedule


def flow_sigmas(steps: int, family: str, shift: float | None = None) -> torch.Tensor:
    """The sigmas of a 'simple' flow schedule with the family's default shift rule (steps + 1 values, last 0):
    Flux's exponential form (mu) or the linear (AuraFlow / SD3 / discrete-flow) form, per ``preview_shift``."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}.")
    rule, default = find_adapter(family).preview_shift
    shift = default if shift is None else shift
    t = torch.linspace(1.0, 0.0, steps + 1, dtype=torch.float64)
    if rule == "exponential":
        e = math.exp(shift)
        sigma = e / (e + (1.0 / t.clamp(min=1e-12) - 1.0))
    else:
        sigma = shift * t / (1.0 + (shift - 1.0) * t)
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
    from dataclasses import replace

    from ..spectral import latent_spectrum, recipe_rules, token_map_spectrum

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
    """Per axis: ratio original/used frequency (steps, pairs) and temperature (steps, pairs), with the same per-axis
    plan the patched model follows (nodes/axis_plan.py: positions, SEGA recipe's scale and m_ref)."""
    from ..rope import ntk_frequencies
    from ..spectral import axis_temperatures, reference_temperature
    from .axis_plan import plan_call

    adapter = find_adapter(request.family)
    axis_dim, theta = adapter.spatial_axis_dim(), adapter.theta
    grid = (max(1, round(request.height / adapter.px_per_token)), max(1, round(request.width / adapter.px_per_token)))
    config = _config(request)
    base_grid = adapter.base_grid(request.base_px, grid)
    sigmas = flow_sigmas(request.steps, request.family, request.shift)[:-1]
    original = plain_frequencies(axis_dim, theta)
    settings = request.sega_settings
    plans = plan_call(config, adapter, grid)
    if plans is not None:  # the trained size the plan uses (SEGA "paper" on Qwen-Image: the official code's 1024)
        base_grid = tuple(plan.base_tokens for plan in plans)
    spectrum = None
    if request.sega and plans is not None:
        # Profiles only depend on the grid, so a coarser synthetic grid with the same token aspect keeps this fast
        # (at most 256 latent pixels per side, whatever the patch: Chroma Radiance's tokens are 16 pixels wide).
        preview_grid = tuple(min(n, max(8, 256 // adapter.patch_size)) for n in grid)
        spectrum = _chunked_spectrum(sigmas, preview_grid, adapter.patch_size, settings)
    freqs_per_axis, temperatures, scales = [], [], []
    for index, key in enumerate(("h", "w")):
        plan = None if plans is None else plans[index]
        scale = grid[index] / base_grid[index] if plan is None else plan.scale
        temperature = None
        if plan is None or not plan.rescaled:
            freqs = original.expand(len(sigmas), -1)
        elif plan.ntk_factor is not None:
            freqs = ntk_frequencies(axis_dim, theta, plan.ntk_factor).expand(len(sigmas), -1)
        else:
            freqs = axis_frequencies(config.effective_positions, axis_dim, theta, plan.scale, plan.base_tokens,
                                     sigmas)
        if plan is not None and plan.rescaled:
            if spectrum is not None:
                m_ref = reference_temperature(plan.m_ref_scale, settings.kappa, settings.m_ref)
                if settings.recipe == "refined" or m_ref > 1.0 + 1e-8:
                    temperature = axis_temperatures(freqs, getattr(spectrum, f"band_{key}"),
                                                    getattr(spectrum, f"axis_{key}"), spectrum.spread,
                                                    plan.m_ref_scale, settings, spectrum.valid)
            elif not request.sega and request.schedule.method == "yarn":
                temperature = torch.full_like(freqs, yarn_attention_scale(plan.scale))
        freqs_per_axis.append(freqs)
        temperatures.append(temperature)
        scales.append(scale)
    axes = {}
    for index, (name, n) in enumerate((("rows", grid[0]), ("columns", grid[1]))):
        source = index if plans is None else plans[index].temperature_axis
        rescaled = plans is not None and plans[index].rescaled
        temperature = temperatures[source] if rescaled else None
        freqs = freqs_per_axis[index]
        axes[name] = {"tokens": n, "scale": scales[index], "ratio": original / freqs,
                      "temperature": torch.ones_like(freqs) if temperature is None else temperature.expand_as(freqs)}
    return {"sigmas": sigmas, "axes": axes, "grid": grid, "base_tokens": max(base_grid), "base_grid": base_grid}


def render(request: PreviewRequest):
    """The preview as a PIL image: the figure (schedule_figure.py) of this request's curves."""
    from .schedule_figure import draw

    return draw(request, schedule_curves(request))


MAX_SIDE_PX = 65536
MAX_STEPS = 200  # as the node; the picture is 12 px wide per step


def _bounded(kind: type, low: float, high: float):
    """An argparse ``type`` that accepts finite numbers in [low, high] and says why otherwise (exit status 2)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text}")
        return value

    return parse


def _image_path(text: str) -> Path:
    from PIL import Image

    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name such as {path / 'schedule.png'}")
    if path.suffix.lower() in (".jpg", ".jpeg", ".webp", ".png", ".gif", ".bmp", ".tif", ".tiff"):
        return path  # common ones without loading every Pillow plugin
    formats = Image.registered_extensions()  # extension -> format, readable or writable
    if formats.get(path.suffix.lower()) not in Image.SAVE:
        raise argparse.ArgumentTypeError(f"Pillow cannot write {path.suffix or 'a file without extension'!r}; "
                                         "use .png (or another format it writes, such as .jpg or .webp)")
    return path


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """``schedule-preview``: write the preview PNG. Usage errors exit with status 2, write errors with 1."""
    parser = argparse.ArgumentParser(prog=prog, description="Draw the DyPE/SEGA schedule for a target size.")
    parser.add_argument("--family", default="flux", choices=[a.name for a in ADAPTERS])
    parser.add_argument("--width", type=_bounded(int, 16, MAX_SIDE_PX), default=4096, help="pixels")
    parser.add_argument("--height", type=_bounded(int, 16, MAX_SIDE_PX), default=4096, help="pixels")
    parser.add_argument("--steps", type=_bounded(int, 1, MAX_STEPS), default=28)
    parser.add_argument("--shift", type=_bounded(float, 1e-3, 100.0), default=None,
                        help="default: the family's (Flux mu 1.15, Qwen 3.1)")
    parser.add_argument("--method", default="yarn", choices=["yarn", "ntk", "pi", "off"])
    parser.add_argument("--static", action="store_true", help="static extrapolation instead of DyPE")
    parser.add_argument("--lambda-t", type=_bounded(float, 0.0, 64.0), default=2.0)
    parser.add_argument("--lambda-s", type=_bounded(float, 0.0, 64.0), default=2.0)
    parser.add_argument("--base-resolution", type=_bounded(float, 0.0, MAX_SIDE_PX),
                        default=0.0, help="trained resolution in pixels; 0 = the family default")
    parser.add_argument("--no-sega", action="store_true", help="show YaRN's scalar temperature instead of SEGA's")
    parser.add_argument("--sega-alone", action="store_true",
                        help="SEGA Attention without DyPE: its recipe's static NTK positions")
    parser.add_argument("--allocation", default="rank", choices=list(ALLOCATIONS), help="SEGA allocation")
    parser.add_argument("--m-ref", default="power", choices=list(REFERENCE_RULES), help="SEGA m_ref rule")
    parser.add_argument("--floor", type=_bounded(float, 0.0, 4.0), default=1.0, help="SEGA floor (0 = off)")
    parser.add_argument("--recipe", default="paper", choices=list(RECIPES),
                        help="SEGA recipe: paper (the official SEGA code), port (the diffusers port), refined (ours)")
    parser.add_argument("--out", type=_image_path, default=Path("dype_schedule.png"),
                        help="image file to write (.png; any extension Pillow writes)")
    args = parser.parse_args(argv)
    if 0 < args.base_resolution < 16:
        parser.error(f"--base-resolution must be 0 (family default) or at least 16 px, got {args.base_resolution:g}")
    request = PreviewRequest(
        family=args.family, width=args.width, height=args.height, steps=args.steps, shift=args.shift,
        schedule=PositionSchedule(method=args.method, dynamic=not args.static, lambda_t=args.lambda_t,
                                  lambda_s=args.lambda_s),
        base_px=args.base_resolution, sega=not args.no_sega, sega_alone=args.sega_alone,
        sega_settings=SegaSettings(allocation=args.allocation, m_ref=args.m_ref, floor=args.floor,
                                   recipe=args.recipe),
    )
    image = render(request)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        image.save(args.out)
    except (OSError, ValueError) as error:
        print(f"{parser.prog}: error: cannot write {args.out}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0
