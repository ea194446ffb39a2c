"""The picture on HRDiT Cascade's help page (nodes/web/docs/DyPESEGA_HrditCascade.md): the cascade at the node's
defaults, drawn with Pillow from the pack's own settings (nodes/cascade/hrdit_settings.py, which reads the input
definitions), so it cannot show other numbers than the node: each pass's size, which steps of the one schedule it
runs, where SPA and HAP are on, and the inputs to set first. make_workflows.py writes it
(cards.write_help_pictures); tests/test_node_ui.py compares it with a fresh one.
"""

from __future__ import annotations

from pathlib import Path

from .hiflow_picture import GREY, INK, _font, _wrapped

PICTURE = Path(__file__).resolve().parents[2] / "nodes" / "web" / "docs" / "DyPESEGA_HrditCascade.png"
WIDTH, HEIGHT = 1000, 664
BAND, LIGHT, SPA = (40, 96, 150), (222, 232, 244), (214, 120, 30)  # the HRDiT cards' band colour; SPA's steps


def picture():
    """Boxes growing with each pass's size, each stage's steps on the base schedule (SPA's marked), the first
    inputs."""
    import host
    from PIL import Image, ImageDraw

    s = host.pack_submodule("nodes.cascade.hrdit_settings").HrditSettings()
    image = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, WIDTH, 64], fill=BAND)
    draw.text((24, 32), "HRDiT Cascade: HiFlow's stages with SPA and HAP", anchor="lm", fill="white", font=_font(30))
    base = 1024
    passes = [(f"base pass  {base} x {base}", ["the latent's own size: all", "steps, the model as it is",
                                                       "(no SPA, no HAP); keeps its", "x0 at every step"])]
    for index, (scale, count) in enumerate(zip(s.scales, s.stage_steps, strict=True)):
        side = round(base * scale)
        spa = f"SPA on its first {s.spa_steps[index]} steps" if s.spa_on(index) else "no SPA (spa_steps 0)"
        passes.append((f"stage {index + 1}  {side} x {side}", [
            f"the last {count} steps, NTK x {s.ntk_factor[index]:g},", spa + ",",
            f"HAP on every step (anchor {s.global_anchor})", "x0 and velocity aligned"]))
    column = (WIDTH - 48) / len(passes)
    boxes = [60, 96, 150]
    for index, (title, lines) in enumerate(passes):
        x0 = 24 + index * column
        side = boxes[min(index, len(boxes) - 1)]
        top = 90 + (boxes[-1] - side)
        draw.rectangle([x0, top, x0 + side, top + side], fill=LIGHT, outline=BAND, width=3)
        if index:
            draw.line([x0 - 70, top + side / 2, x0 - 14, top + side / 2], fill=GREY, width=4)
            draw.polygon([(x0 - 6, top + side / 2), (x0 - 18, top + side / 2 - 9), (x0 - 18, top + side / 2 + 9)],
                         fill=GREY)
        draw.text((x0, 262), title, fill=INK, font=_font(24))
        for row, line in enumerate(lines):
            draw.text((x0, 296 + 26 * row), line, fill=GREY, font=_font(19))
    _schedule(draw, s, top=424)
    first = ("Set first: spa and hap (on: the official run; both need FLUX.1), steps, scales, stage_steps and "
             "spa_steps; from an image, denoise (< 1). group_num, global_anchor, the alignment and the official "
             "stage model keep the official defaults: advanced inputs.")
    _wrapped(draw, first, top=560, width=WIDTH - 48)
    return image


def _schedule(draw, s, top: int) -> None:
    """One row of cells per pass over the base schedule's steps; a stage's SPA steps in SPA's colour."""
    draw.text((24, top), f"the one base schedule of {s.steps} steps: which steps each pass runs (SPA's marked)",
              fill=INK, font=_font(20))
    left, cell = 190, (WIDTH - 214) / s.steps
    for row, count in enumerate([s.steps, *s.stage_steps]):
        y = top + 30 + row * 30
        label = "base" if row == 0 else f"stage {row}"
        spa = s.spa_steps[row - 1] if row and s.spa else 0
        draw.text((24, y + 11), f"{label}: {count} steps", anchor="lm", fill=GREY, font=_font(18))
        for step in range(s.steps):
            first = s.steps - count
            fill = (226, 226, 226) if step < first else SPA if step < first + spa else BAND
            draw.rectangle([left + step * cell + 1, y, left + (step + 1) * cell - 1, y + 22], fill=fill)


def picture_bytes() -> bytes:
    import io

    out = io.BytesIO()
    picture().quantize(64).save(out, "PNG", optimize=True)  # a flat drawing: 64 colours keep it sharp and small
    return out.getvalue()
