"""The picture on HiFlow Cascade's help page (nodes/web/docs/DyPESEGA_HiFlowCascade.md): the cascade at the node's
defaults, drawn with Pillow from the pack's own input definitions (nodes/inputs/cascade.py), so it cannot show
other numbers than the node. What each pass does, which steps of the one schedule it runs, and the inputs to set
first. make_workflows.py writes it (cards.write_help_pictures); tests/test_node_ui.py compares it with a fresh one.
"""

from __future__ import annotations

from pathlib import Path

PICTURE = Path(__file__).resolve().parents[2] / "nodes" / "web" / "docs" / "DyPESEGA_HiFlowCascade.png"
WIDTH, HEIGHT = 1000, 664
PURPLE, INK, GREY = (118, 66, 160), (30, 30, 30), (95, 95, 95)  # the HiFlow cards' band colour


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)  # Pillow's own: no "×" or "→" glyphs, hence "x" and "->"


def _defaults() -> tuple[int, list[float], list[int]]:
    import host

    rules = host.pack_submodule("nodes.inputs.cascade")
    settings = host.pack_submodule("nodes.cascade.settings").HiFlowSettings()
    return rules.STEPS.default, list(settings.scales), list(settings.stage_steps)


def picture():
    """The cascade as boxes growing with each pass's size, its steps on the base schedule, the first inputs."""
    from PIL import Image, ImageDraw

    steps, scales, stage_steps = _defaults()
    image = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, WIDTH, 64], fill=PURPLE)
    draw.text((24, 32), "HiFlow Cascade: one base pass, then larger stages that follow it", anchor="lm", fill="white",
              font=_font(30))
    base = 1024
    passes = [(f"base pass  {base} x {base}", ["the latent's own size: all steps", "(from an image: the last",
                                                       "steps x denoise); keeps its x0", "prediction at every step"])]
    for index, (scale, count) in enumerate(zip(scales, stage_steps, strict=True)):
        side = round(base * scale)
        passes.append((f"stage {index + 1}  {side} x {side}", [
            f"scales {scale:g}: decode, resize, sharpen,", f"encode, then the last {count} steps",
            "(stage_steps); x0 and velocity", "pulled to the pass before"]))
    column = (WIDTH - 48) / len(passes)
    boxes = [60, 96, 150]  # the square drawn for each pass, px: it grows with the size
    for index, (title, lines) in enumerate(passes):
        x0 = 24 + index * column
        side = boxes[min(index, len(boxes) - 1)]
        top = 90 + (boxes[-1] - side)
        draw.rectangle([x0, top, x0 + side, top + side], fill=(232, 224, 242), outline=PURPLE, width=3)
        if index:
            draw.line([x0 - 70, top + side / 2, x0 - 14, top + side / 2], fill=GREY, width=4)
            draw.polygon([(x0 - 6, top + side / 2), (x0 - 18, top + side / 2 - 9), (x0 - 18, top + side / 2 + 9)],
                         fill=GREY)
        draw.text((x0, 262), title, fill=INK, font=_font(24))
        for row, line in enumerate(lines):
            draw.text((x0, 296 + 26 * row), line, fill=GREY, font=_font(19))
    _schedule(draw, steps, [steps, *stage_steps], top=424)
    first = ("Set first: steps, scales (sizes), stage_steps; from an image, denoise (< 1) and the latent of your image."
             " The alignment (alphas, betas, filter_ratio) and the official stage model (ntk_factor, proportional"
             " attention, swin) keep the official defaults: advanced inputs.")
    _wrapped(draw, first, top=560, width=WIDTH - 48)
    return image


def _schedule(draw, steps: int, runs: list[int], top: int) -> None:
    """One row of cells per pass over the base schedule's steps: each stage runs its tail (time-matched)."""
    draw.text((24, top), f"the one base schedule of {steps} steps: which steps each pass runs", fill=INK,
              font=_font(20))
    left, cell = 190, (WIDTH - 214) / steps
    for row, count in enumerate(runs):
        y = top + 30 + row * 30
        label = "base" if row == 0 else f"stage {row}"
        draw.text((24, y + 11), f"{label}: {count} steps", anchor="lm", fill=GREY, font=_font(18))
        for step in range(steps):
            ran = step >= steps - count
            draw.rectangle([left + step * cell + 1, y, left + (step + 1) * cell - 1, y + 22],
                           fill=PURPLE if ran else (226, 226, 226))


def _wrapped(draw, text: str, top: int, width: int) -> None:
    font, line, y = _font(20), "", top
    for word in text.split():
        if draw.textlength(f"{line} {word}".strip(), font=font) > width:
            draw.text((24, y), line, fill=INK, font=font)
            line, y = word, y + 28
        else:
            line = f"{line} {word}".strip()
    draw.text((24, y), line, fill=INK, font=font)


def picture_bytes() -> bytes:
    import io

    out = io.BytesIO()
    picture().quantize(64).save(out, "PNG", optimize=True)  # a flat drawing: 64 colours keep it sharp and small
    return out.getvalue()
