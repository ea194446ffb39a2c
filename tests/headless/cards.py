"""The template browser's card picture of a workflow (its same-name ``.jpg``) and the registry icon: facts read
from the graph and the pack, drawn with Pillow (make_workflows.py writes them; tests/test_workflows.py compares)."""

from __future__ import annotations

import re
from typing import Any

import native_sizes

from . import registry
from .graph import LATENT_NODES, WORKFLOWS_DIR
from .notes import NUNCHAKU_FLUX

# The three recipes a card can show, each with its own colour so cards tell them apart at a glance.
RECIPES = {
    "dype": ("DyPE", (37, 99, 175)),
    "dype+sega": ("DyPE + SEGA · ours", (22, 122, 88)),
    "sega": ("published SEGA recipe", (190, 84, 0)),
    "hiflow": ("HiFlow cascade", (118, 66, 160)),
    "hiflow+dype+sega": ("HiFlow + DyPE + SEGA · ours", (22, 122, 88)),
    "imax": ("I-Max cascade", (22, 110, 130)),
    "hrdit": ("HRDiT cascade", (40, 96, 150)),
    "hrdit+sega": ("HRDiT + SEGA · ours", (40, 96, 150)),
}
BAND = 156  # px: the recipe's coloured band at the top
HIFLOW = "DyPESEGA_HiFlowCascade"
#: The cascade nodes: the recipe (and the chain's label) of a card whose graph has one.
CASCADES = {HIFLOW: ("hiflow", "HiFlow"), "DyPESEGA_ImaxCascade": ("imax", "I-Max"),
            "DyPESEGA_HrditCascade": ("hrdit", "HRDiT")}
# The cascades' widgets in order (seed, its control, steps, cfg, denoise, scales, ...): the ones a card reads
HIFLOW_STEPS, HIFLOW_CFG, HIFLOW_DENOISE, HIFLOW_SCALES, HIFLOW_STAGE_STEPS = 2, 3, 4, 5, 6
THUMB = 768  # px, square like the browser's cards (shown about 250 px wide: type below 30 px is not readable)


def card_facts(workflow: dict[str, Any]) -> dict[str, Any]:
    """What a template card says about a workflow, all read from the graph (and the pack's adapter for the trained
    size): model (the note's heading), recipe, target size, trained size, sampler settings, the model chain."""
    import host

    nodes = workflow["nodes"]
    by_type = {n["type"]: n["widgets_values"] for n in nodes}
    note = next(n for n in nodes if n["type"] == "MarkdownNote")["widgets_values"][0]
    # the note's heading, less a parenthesis ("(Zeta-Chroma)": in the note)
    model = re.sub(r" \(.*\)$", "", note.splitlines()[0].removeprefix("# ").split(" · ")[0])
    dype, sega = by_type.get("DyPESEGA_PatchModel"), by_type.get("DyPESEGA_SEGAAttention")
    cascade = next((node for node in CASCADES if node in by_type), None)
    if cascade is not None:
        return _cascade_facts(workflow, model, by_type, cascade) | {"also": _also(workflow, note)}
    recipe = "dype+sega" if dype and sega else "dype" if dype else "sega"
    video = "EmptyHunyuanLatentVideo" in by_type
    width, height, *rest = next(by_type[t] for t in (*LATENT_NODES, "EmptyHunyuanLatentVideo") if t in by_type)
    unets = [n["widgets_values"][0] for n in nodes if n["type"] == "UNETLoader"]
    adapter = host.pack_submodule("nodes.families").find_adapter(registry.MODEL_FAMILY[unets[0]])
    families = host.pack_submodule("nodes.families")
    widgets = dype or sega
    base = widgets[4 if dype else 7] or families.variant_base_px(widgets[-1], adapter)
    words = None  # "trained at W x H" unless the family's largest documented size is not square (native_sizes.py)
    if not base and not dype and sega[10].startswith("paper") and adapter.paper_quirks.base_px:
        base = adapter.paper_quirks.base_px  # SEGA alone, recipe paper: the SEGA authors' code's own trained size
        words = f"base {base} x {base} (paper)"
    elif not base and not video and not native_sizes.is_square(adapter.name):
        words = native_sizes.card_words(adapter.name)
    short, long = adapter.trained_size(base)
    trained = (long, short) if width >= height else (short, long)
    if "KSampler" in by_type:
        seed, _, steps, cfg, sampler, scheduler, _ = by_type["KSampler"]
    else:
        _, seed, _, steps, cfg, sampler, scheduler, *_ = by_type["KSamplerAdvanced"]
    return {"model": model, "recipe": recipe, "size": (width, height), "frames": rest[0] if video else None,
            "trained": (round(trained[0]), round(trained[1])), "trained_words": words, "steps": steps, "cfg": cfg,
            "sampler": sampler, "guidance": by_type.get("FluxGuidance", [None])[0], "models": len(unets),
            "also": _also(workflow, note)}


#: The card's line below its numbers: the ComfyUI a model needs (newer than every test host: before the frontend's
#: missing-node dialog says so), or that the note tells how to run the graph on Nunchaku's quantized FLUX.1.
NEEDS_COLOUR = (170, 40, 20)


def _also(workflow: dict[str, Any], note: str) -> str | None:
    unets = [n["widgets_values"][0] for n in workflow["nodes"] if n["type"] == "UNETLoader"]
    needs = sorted({registry.NEWER_HOST[f] for f in unets if f in registry.NEWER_HOST})
    if needs:
        return f"needs ComfyUI {needs[-1]} or newer"
    return "also on Nunchaku FLUX (int4 / fp4)" if NUNCHAKU_FLUX in note else None


def _cascade_facts(workflow: dict[str, Any], model: str, by_type: dict[str, list], node: str) -> dict[str, Any]:
    """A cascade's card: base size (the latent, or the image scale), final size = base x the last scale, the base
    pass's steps and the stages' steps; its sampler is the cascade's own Euler."""
    import host

    widgets = by_type[node]
    base = next((by_type[t][:2] for t in LATENT_NODES if t in by_type), None) or by_type["ImageScale"][1:3]
    scale = float(widgets[HIFLOW_SCALES].split(",")[-1])
    unets = [n["widgets_values"][0] for n in workflow["nodes"] if n["type"] == "UNETLoader"]
    adapter = host.pack_submodule("nodes.families").find_adapter(registry.MODEL_FAMILY[unets[0]])
    short, long = adapter.trained_size(adapter.default_base_px)
    method = CASCADES[node][0]
    stages = "+dype" * ("DyPESEGA_PatchModel" in by_type) + "+sega" * ("DyPESEGA_SEGAAttention" in by_type)
    recipe = method + stages
    return {"model": model, "recipe": recipe, "size": (round(base[0] * scale), round(base[1] * scale)),
            "frames": None, "trained": (round(long), round(short)), "steps": widgets[HIFLOW_STEPS],
            "cfg": widgets[HIFLOW_CFG], "sampler": "euler", "guidance": by_type.get("FluxGuidance", [None])[0],
            "models": len(unets), "cascade": (tuple(base), widgets[HIFLOW_STAGE_STEPS], widgets[HIFLOW_DENOISE]),
            "method": CASCADES[node][1]}


def _fit_font(draw, text: str, size: int, width: int):
    from PIL import ImageFont

    while size > 20 and draw.textlength(text, font=ImageFont.load_default(size=size)) > width:
        size -= 2
    return ImageFont.load_default(size=size)


def thumbnail(workflow: dict[str, Any]):
    """The template card's picture, readable at card size: the recipe on a band of its colour, the model, the
    size, the key numbers and a drawing of the model chain with this pack's nodes in the recipe's colour. Only facts
    of the graph: no sample image (none is made here), no invented output."""
    from PIL import Image, ImageDraw

    f = card_facts(workflow)
    label, colour = RECIPES[f["recipe"]]
    image = Image.new("RGB", (THUMB, THUMB), (248, 248, 246))
    draw = ImageDraw.Draw(image)
    pad, text_w = 40, THUMB - 80
    # The band's label sits in its lower part: frontend 1.53 lays a "Node graph" chip over the card's top-left corner
    draw.rectangle([0, 0, THUMB, BAND], fill=colour)
    draw.text((pad, BAND - 40), label, fill="white", font=_fit_font(draw, label, 56, text_w), anchor="lm",
              stroke_width=1, stroke_fill="white")
    draw.text((pad, 226), f["model"], fill=(20, 20, 20), font=_fit_font(draw, f["model"], 80, text_w), anchor="lm",
              stroke_width=2, stroke_fill=(20, 20, 20))
    (w, h), frames = f["size"], f["frames"]
    size = f"{w} x {h}" + (f" x {frames} frames" if frames else "")  # Pillow's own font has no "×" or "→"
    draw.text((pad, 320), size, fill=(20, 20, 20), font=_fit_font(draw, size, 64, text_w), anchor="lm",
              stroke_width=1, stroke_fill=(20, 20, 20))
    tw, th = f["trained"]
    factor = f"{w / tw:.2g}x per side" if abs(w / tw - h / th) < 0.05 else f"{w / tw:.2g}x wide, {h / th:.2g}x high"
    numbers = [f"{f.get('trained_words') or f'trained at {tw} x {th}'}: {factor}",
               f"{f['steps']} steps · {f['sampler']} · cfg {f['cfg']:g}"
               + (f" · guidance {f['guidance']:g}" if f["guidance"] is not None else ""),
               _passes(f)]
    if f["also"]:
        numbers.append(f["also"])
    for i, line in enumerate(numbers):
        ink = NEEDS_COLOUR if line.startswith("needs ") else (60, 60, 60)
        draw.text((pad, 404 + 54 * i), line, fill=ink, font=_fit_font(draw, line, 40, text_w), anchor="lm",
                  **({"stroke_width": 1, "stroke_fill": ink} if ink == NEEDS_COLOUR else {}))
    _draw_chain(draw, f, colour, top=628)
    return image


def _passes(facts: dict[str, Any]) -> str:
    if "cascade" not in facts:
        return "one pass, no upscaler"
    (w, h), stage_steps, denoise = facts["cascade"]
    stages = " + ".join(part.strip() for part in stage_steps.split(","))
    if denoise < 1:
        return f"image {w} x {h}, denoise {denoise:g}, stages {stages}"
    if facts["method"] == "I-Max":
        return f"{w} x {h} first, then {stages} steps from noise"
    return f"{w} x {h} first, then stages of {stages} steps"


def _draw_chain(draw, facts: dict[str, Any], colour: tuple[int, int, int], top: int) -> None:
    """model → [DyPE] → [SEGA] → sampler → image: this pack's nodes filled in the recipe's colour."""
    from PIL import ImageFont

    twice = " x2" if facts["models"] > 1 else ""
    steps = [("model" + twice, False)]
    if "cascade" in facts:  # model [-> DyPE] [-> SEGA] -> HiFlow -> image
        steps += [(name, True) for name in ("DyPE", "SEGA") if name.lower() in facts["recipe"]]
        steps += [(facts["method"], True), ("image", False)]
    else:
        steps += [("DyPE" + twice, True)] if facts["recipe"] != "sega" else []
        steps += [("SEGA" + twice, True)] if facts["recipe"] != "dype" else []
        steps += [("sampler" + twice, False), ("video" if facts["frames"] else "image", False)]
    font = ImageFont.load_default(size=30)
    gap, height, left, right = 30, 96, 40, THUMB - 40
    width = (right - left - gap * (len(steps) - 1)) / len(steps)
    for i, (text, ours) in enumerate(steps):
        x0 = left + i * (width + gap)
        box = [x0, top, x0 + width, top + height]
        draw.rounded_rectangle(box, radius=14, fill=colour if ours else (255, 255, 255),
                               outline=colour if ours else (150, 150, 150), width=3)
        draw.text(((box[0] + box[2]) / 2, top + height / 2), text, anchor="mm", font=_fit_font(draw, text, 30, width - 12)
                  if draw.textlength(text, font=font) > width - 12 else font, fill="white" if ours else (40, 40, 40))
        if i:
            y = top + height / 2
            draw.line([x0 - gap + 4, y, x0 - 6, y], fill=(120, 120, 120), width=3)
            draw.polygon([(x0 - 4, y), (x0 - 14, y - 7), (x0 - 14, y + 7)], fill=(120, 120, 120))


def thumbnail_bytes(workflow: dict[str, Any]) -> bytes:
    """The .jpg written next to the workflow (the test regenerates and compares these)."""
    import io

    buffer = io.BytesIO()
    thumbnail(workflow).save(buffer, format="JPEG", quality=88, optimize=True)
    return buffer.getvalue()


ICON = WORKFLOWS_DIR.parent / "icon.png"  # pyproject [tool.comfy] Icon points at its raw URL


def icon():
    """The registry icon: DyPE's frequency-compression map (Flux.1 at 4096², 28 steps, the height axis) in the
    preview figure's colours, 400×400."""
    import host
    import torch
    from PIL import Image

    preview = host.pack_submodule("nodes.schedule_preview")
    figure = host.pack_submodule("nodes.schedule_preview.figure")
    ratio = preview.schedule_curves(preview.PreviewRequest(sega=False))["axes"]["rows"]["ratio"]
    rgb = figure.colours(torch.log2(ratio).T.contiguous(), figure.compression_key(ratio))
    pairs, steps, _ = rgb.shape
    panel = Image.frombuffer("RGB", (steps, pairs), bytes(rgb.reshape(-1).tolist()), "raw", "RGB", 0, 1)
    return panel.resize((400, 400), Image.NEAREST)


HELP_PICTURE = WORKFLOWS_DIR.parent / "nodes" / "web" / "docs" / "DyPESEGA_schedule.jpg"  # the nodes' help pages


def help_picture_bytes() -> bytes:
    """The picture the three nodes' help pages show: the preview node's own figure at its defaults (Flux.1, 4096²,
    28 steps, DyPE + SEGA), as a JPEG of at most 1000 px wide."""
    import io

    import host
    from PIL import Image

    preview = host.pack_submodule("nodes.schedule_preview")
    figure = preview.render(preview.PreviewRequest()).convert("RGB")
    if figure.width > 1000:
        figure = figure.resize((1000, round(figure.height * 1000 / figure.width)), Image.LANCZOS)
    out = io.BytesIO()
    figure.save(out, "JPEG", quality=85, optimize=True)
    return out.getvalue()


def write_help_pictures() -> None:
    """The pictures of the nodes' help pages: the schedule (DyPE, SEGA, the preview) and the cascades (HiFlow,
    I-Max, HRDiT)."""
    from . import hiflow_picture, hrdit_picture, imax_picture

    HELP_PICTURE.write_bytes(help_picture_bytes())
    hiflow_picture.PICTURE.write_bytes(hiflow_picture.picture_bytes())
    imax_picture.PICTURE.write_bytes(imax_picture.picture_bytes())
    hrdit_picture.PICTURE.write_bytes(hrdit_picture.picture_bytes())
