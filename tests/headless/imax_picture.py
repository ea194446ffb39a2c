"""The picture on I-Max Cascade's help page (nodes/web/docs/DyPESEGA_ImaxCascade.md): the cascade at the node's
defaults, drawn with Pillow from the pack's own input definitions (nodes/inputs/cascade.py) and guidance weight
(spectral/imax.py), so it cannot show other numbers than the node. make_workflows.py writes it
(cards.write_help_pictures); tests/test_node_ui.py compares it with a fresh one.
"""

from __future__ import annotations

from pathlib import Path

from .hiflow_picture import GREY, INK, _font, _wrapped

PICTURE = Path(__file__).resolve().parents[2] / "nodes" / "web" / "docs" / "DyPESEGA_ImaxCascade.png"
WIDTH, HEIGHT = 1000, 640
TEAL = (22, 110, 130)  # the I-Max cards' band colour


def _defaults():
    import host

    rules = host.pack_submodule("nodes.inputs.cascade")
    settings = host.pack_submodule("nodes.cascade.imax_settings").ImaxSettings()
    return rules, settings, host.pack_submodule("spectral.imax")


def picture():
    """The base pass, the guide, each stage from noise, and the projected flow's weight over the stage's steps."""
    from PIL import Image, ImageDraw

    rules, s, im = _defaults()
    image = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, WIDTH, 64], fill=TEAL)
    draw.text((24, 32), "I-Max Cascade: a base pass, then larger passes guided by it", anchor="lm", fill="white",
              font=_font(30))
    base = 1024
    passes = [(f"base pass  {base} x {base}", [f"{s.steps} steps, static shift {s.base_shift:g}",
                                                "(from an image: the last", "steps x denoise)"])]
    for index, (scale, count) in enumerate(zip(s.scales, s.stage_steps, strict=True)):
        side = round(base * scale)
        passes.append((f"stage {index + 1}  {side} x {side}", [
            "guide: decode, resize, encode", f"{count} steps from noise, shift {s.stage_shift[index]:g},",
            f"guidance {s.stage_guidance[index]:g}, NTK x {s.ntk_factor[index]:g}"]))
    column = (WIDTH - 48) / max(len(passes), 2)
    boxes = [60, 150]
    for index, (title, lines) in enumerate(passes):
        x0 = 24 + index * column
        side = boxes[min(index, len(boxes) - 1)]
        top = 90 + (boxes[-1] - side)
        draw.rectangle([x0, top, x0 + side, top + side], fill=(220, 236, 240), outline=TEAL, width=3)
        if index:
            draw.line([x0 - 90, top + side / 2, x0 - 14, top + side / 2], fill=GREY, width=4)
            draw.polygon([(x0 - 6, top + side / 2), (x0 - 18, top + side / 2 - 9), (x0 - 18, top + side / 2 + 9)],
                         fill=GREY)
        draw.text((x0, 262), title, fill=INK, font=_font(24))
        for row, line in enumerate(lines):
            draw.text((x0, 296 + 26 * row), line, fill=GREY, font=_font(19))
    _weights(draw, im, s.stage_steps[-1], s.guidance_schedule, top=400)
    first = ("Set first: steps, scales (sizes), stage_steps; from an image, denoise (< 1) and the latent of your image. "
             "The schedule (shifts), the projected flow (guidance_schedule, wavelet_level) and the stage model "
             "(ntk_factor, proportional attention, text duplication, swin) keep the official defaults: advanced inputs.")
    _wrapped(draw, first, top=536, width=WIDTH - 48)
    return image


def _weights(draw, im, steps: int, schedule: str, top: int) -> None:
    """The projected flow's weight at each step of the last stage: one bar per step."""
    draw.text((24, top), f"the last stage's {steps} steps: how strongly each follows the guide ({schedule}, low "
              "frequencies)", fill=INK, font=_font(20))
    left, cell, height = 24, (WIDTH - 48) / steps, 90
    for step in range(steps):
        weight = im.guidance_weight(step, steps)
        x = left + step * cell
        draw.rectangle([x + 1, top + 32 + height * (1 - weight), x + cell - 1, top + 32 + height], fill=TEAL)


def picture_bytes() -> bytes:
    import io

    out = io.BytesIO()
    picture().quantize(64).save(out, "PNG", optimize=True)  # a flat drawing: 64 colours keep it sharp and small
    return out.getvalue()
