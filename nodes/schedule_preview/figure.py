"""The Schedule Preview as a figure someone can read without the README: drawing only (curves.py computes).

Two rows of two heat maps, one column per image axis. Top row: how much DyPE compresses each RoPE frequency pair at
each step, original over used frequency (1x = the model's own positions). Bottom row: the attention temperature of
each pair (1 = unchanged; YaRN scales every pair alike, SEGA each pair by the latent's spectrum). Every panel has
labelled axes (sampling step with its sigma; RoPE pair from high to low frequency) and its own colour key, spanning
its own values: a panel that holds one value says so instead of stretching the ramp over a rounding difference.
Pillow's own font (the same on every machine) has no Greek letters or arrows, so the text is ASCII.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ..families import find_adapter
from .curves import schedule_curves
from .request import PreviewRequest

if TYPE_CHECKING:
    from PIL import Image

# A perceptually ordered dark blue -> yellow ramp (viridis-like), as (position, RGB) stops.
RAMP = ((0.0, (20, 24, 82)), (0.35, (38, 120, 160)), (0.7, (110, 200, 100)), (1.0, (250, 230, 60)))
MIN_TEMPERATURE_SPAN = 0.02  # a key never spans less: a smaller spread reads as one colour, as it should
BACKGROUND, INK, MUTED = (250, 250, 250), (20, 20, 20), (90, 90, 90)


@dataclass(frozen=True)
class ColourKey:
    """How one panel's values map to colours, and what its key shows."""

    label: str  # the quantity and its unit
    low: float  # value at the bottom of the ramp (for compression: log2 of the factor)
    high: float
    ticks: tuple[tuple[float, str], ...]  # (value, label) marked on the key
    constant: str | None = None  # the panel holds one value: a single swatch and this text (lines), no ramp


def compression_key(ratio: torch.Tensor) -> ColourKey:
    """Original / used frequency, coloured on a log2 scale from 1x to the panel's largest factor (at least 2x)."""
    top = float(torch.log2(ratio).max())
    label = "compression (original / used frequency)"
    if top < 0.01:
        return ColourKey(label, 0.0, 1.0, (), constant="1x everywhere:\nthe model's own\npositions")
    high = max(top, 1.0)
    ticks = [(float(k), f"{2 ** k:g}x") for k in range(0, math.floor(high) + 1) if k <= top - 0.15 or k == 0]
    ticks.append((top, f"{2 ** top:.3g}x"))
    if high - top > 0.15:  # the ramp goes on past the data (at least to 2x): say where it ends
        ticks.append((high, f"{2 ** high:g}x"))
    return ColourKey(label, 0.0, high, tuple(ticks))


def temperature_key(temperature: torch.Tensor) -> ColourKey:
    """The panel's temperatures, spanning their own range (never less than MIN_TEMPERATURE_SPAN); one value when the
    key's three decimals cannot tell them apart (YaRN's scalar, or 1 at the trained size)."""
    low, high = float(temperature.min()), float(temperature.max())
    label = "attention temperature (1 = unchanged)"
    if f"{low:.3f}" == f"{high:.3f}":
        return ColourKey(label, high - 1.0, high + 1.0, (), constant=f"{high:.3f} at every\npair and step")
    ticks = ((low, f"{low:.3f}"), (high, f"{high:.3f}"))
    if high - low >= MIN_TEMPERATURE_SPAN:
        return ColourKey(label, low, high, ticks)
    centre = (low + high) / 2
    return ColourKey(label, centre - MIN_TEMPERATURE_SPAN / 2, centre + MIN_TEMPERATURE_SPAN / 2, ticks)


def colours(values: torch.Tensor, key: ColourKey) -> torch.Tensor:
    """uint8 RGB (..., 3) of ``values`` on the key's ramp (a constant panel takes the ramp's middle)."""
    if key.constant is not None:
        position = torch.full_like(values, 0.5, dtype=torch.float64)
    else:
        position = ((values.to(torch.float64) - key.low) / (key.high - key.low)).clamp(0.0, 1.0)
    out = torch.zeros((*values.shape, 3), dtype=torch.float64)
    for (a, ca), (b, cb) in zip(RAMP, RAMP[1:], strict=False):
        f = ((position - a) / (b - a)).clamp(0.0, 1.0)
        inside = (position >= a) & (position <= b)
        for c in range(3):
            out[..., c] = torch.where(inside, ca[c] + (cb[c] - ca[c]) * f, out[..., c])
    return out.round().to(torch.uint8)


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def describe(request: PreviewRequest, curves: dict) -> tuple[str, str, str]:
    """Title, recipe line and caption of the figure."""
    adapter = find_adapter(request.family)
    steps = len(curves["sigmas"])
    title = f"{adapter.display_name}:  {request.width} x {request.height},  {steps} steps"
    base_rows, base_cols = curves["base_grid"]
    px = adapter.px_per_token
    trained = f"trained at {base_cols * px:.0f} x {base_rows * px:.0f}"
    labels = {"paper": "paper, the published recipe", "port": "diffusers port", "refined": "refined, ours"}
    if request.sega and request.sega_alone:
        recipe = (f"SEGA alone (recipe {labels[request.sega_settings.recipe]}): static NTK positions, "
                  "SEGA temperatures")
    else:
        s = request.schedule
        recipe = f"DyPE Patch Model: {s.method}, {'dynamic' if s.dynamic else 'static'}"
        recipe += " + SEGA Attention (our composition)" if request.sega else ""
    if request.sega:
        st = request.sega_settings
        recipe += f";  SEGA {st.recipe}, {st.allocation}, m_ref {st.m_ref}, floor {st.floor:g}, kappa {st.kappa:g}"
    caption = ("Top: how much each RoPE frequency pair is compressed at each step (1x = unchanged).  Bottom: the "
               "attention temperature of each pair" + (" on a synthetic image latent." if request.sega else "."))
    return title, f"{recipe};  {trained}", caption


def draw(request: PreviewRequest, curves: dict) -> Image.Image:
    """The figure for ``curves`` (schedule_preview.schedule_curves of ``request``)."""
    from PIL import Image, ImageDraw

    steps = len(curves["sigmas"])
    pairs = curves["axes"]["rows"]["ratio"].shape[-1]
    pw, ph = max(steps * 12, 264), max(pairs * 8, 160)
    left, key_gap, key_w, key_text, col_gap = 84, 14, 16, 120, 48
    col_w = pw + key_gap + key_w + key_text
    header, row_title, row_foot, row_gap = 78, 22, 44, 22
    title, recipe, caption = describe(request, curves)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    text_w = max(measure.textlength(title, font=_font(18)), *(measure.textlength(t, font=_font(13))
                                                             for t in (recipe, caption)))
    width = round(max(left + 2 * col_w + col_gap + 12, text_w + 24))
    height = header + 2 * (row_title + ph + row_foot) + row_gap + 8
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw_ = ImageDraw.Draw(image)
    draw_.text((12, 8), title, fill=INK, font=_font(18))
    draw_.text((12, 32), recipe, fill=MUTED, font=_font(13))
    draw_.text((12, 52), caption, fill=INK, font=_font(13))
    for row, quantity in enumerate(("ratio", "temperature")):
        y0 = header + row * (row_title + ph + row_foot + row_gap) + row_title
        for col, (name, axis) in enumerate(curves["axes"].items()):
            x0 = left + col * (col_w + col_gap)
            values = axis[quantity]
            key = compression_key(values) if quantity == "ratio" else temperature_key(values)
            what = "height (rows)" if name == "rows" else "width (columns)"
            base = curves["base_grid"][0 if name == "rows" else 1]
            heading = (f"{what}: {axis['tokens']} tokens, {axis['scale']:.2f}x the trained {base:.0f}"
                       if quantity == "ratio" else f"{what}: {key.label}")
            draw_.text((x0, y0 - row_title), heading, fill=INK, font=_font(13))
            _panel(image, draw_, values if quantity == "temperature" else torch.log2(values), key,
                   (x0, y0, pw, ph), curves["sigmas"], col == 0)
            _key(draw_, key, (x0 + pw + key_gap, y0, key_w, ph))
    return image


def _panel(image, draw_, values: torch.Tensor, key: ColourKey, box: tuple[int, int, int, int],
           sigmas: torch.Tensor, y_label: bool) -> None:
    """One heat map: x = step (left to right), y = RoPE pair (highest frequency on top), with axis ticks and labels."""
    from PIL import Image

    x0, y0, pw, ph = box
    steps, pairs = values.shape
    rgb = colours(values.T.contiguous(), key)  # (pairs, steps, 3): a row per pair
    heat = Image.frombuffer("RGB", (steps, pairs), bytes(rgb.reshape(-1).tolist()), "raw", "RGB", 0, 1)
    image.paste(heat.resize((pw, ph), Image.NEAREST), (x0, y0))
    draw_.rectangle([x0 - 1, y0 - 1, x0 + pw, y0 + ph], outline=(120, 120, 120))
    small = _font(12)
    for step in sorted({1, (steps + 1) // 2, steps}):  # x ticks: first, middle and last step
        x = x0 + (step - 0.5) * pw / steps
        draw_.line([x, y0 + ph, x, y0 + ph + 4], fill=MUTED)
        draw_.text((x, y0 + ph + 6), f"{step}", fill=MUTED, font=small, anchor="ma")
    draw_.text((x0 + pw / 2, y0 + ph + 22), f"sampling step  (sigma {float(sigmas[0]):.2f} at step 1, "
               f"{float(sigmas[-1]):.2f} at step {steps})", fill=INK, font=small, anchor="ma")
    for pair, text in ((0, "0 high"), (pairs - 1, f"{pairs - 1} low")):  # y ticks: first and last pair
        y = y0 + (pair + 0.5) * ph / pairs
        draw_.line([x0 - 5, y, x0 - 1, y], fill=MUTED)
        draw_.text((x0 - 7, y), text, fill=MUTED, font=small, anchor="rm")
    if y_label:
        label = "RoPE pair, high to low frequency"
        if draw_.textlength(label, font=small) > ph:
            label = "RoPE pair"
        w = int(draw_.textlength(label, font=small)) + 4
        from PIL import ImageDraw

        tile = Image.new("RGB", (w, 16), BACKGROUND)
        ImageDraw.Draw(tile).text((2, 1), label, fill=INK, font=small)
        tile = tile.rotate(90, expand=True)
        image.paste(tile, (x0 - 70, y0 + ph // 2 - w // 2))


def _key(draw_, key: ColourKey, box: tuple[int, int, int, int]) -> None:
    """The panel's colour key: a ramp with its ticks, or one swatch and the value for a constant panel."""
    x, y, w, h = box
    small = _font(12)
    if key.constant is not None:
        (r, g, b), = colours(torch.zeros(1), key).tolist()
        draw_.rectangle([x, y + h // 2 - 8, x + w, y + h // 2 + 8], fill=(r, g, b), outline=(120, 120, 120))
        draw_.multiline_text((x + w + 6, y + h // 2 - 8), key.constant, fill=INK, font=small, spacing=3)
        return
    ramp = colours(torch.linspace(key.high, key.low, h, dtype=torch.float64), key).tolist()
    for i, c in enumerate(ramp):
        draw_.line([x, y + i, x + w - 1, y + i], fill=tuple(c))
    draw_.rectangle([x - 1, y - 1, x + w, y + h], outline=(120, 120, 120))
    for value, text in key.ticks:
        ty = y + (key.high - value) / (key.high - key.low) * (h - 1)
        draw_.line([x + w, ty, x + w + 4, ty], fill=MUTED)
        draw_.text((x + w + 6, ty), text, fill=INK, font=small, anchor="lm")


def render(request: PreviewRequest):
    """The preview as a PIL image: the figure of this request's curves."""
    return draw(request, schedule_curves(request))
