"""Make the README's pictures (docs/*.jpg) from the browser test's screenshots in out/browser/, and record what each
shows in docs/pictures.json (tests/test_docs_pictures.py fails when the nodes or workflows no longer match it).

Run the browser test first (on the 0.30 leg: its frontend shows no first-run banner), then this script:

    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 .venv/bin/python -m pytest -q tests/test_browser.py
    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 .venv/bin/python scripts/docs_screenshots.py

The canvas picture is cut to the graph: its box on screen follows from the workflow's saved view (the nodes' boxes
through ``extra.ds``), the same as the browser test checks.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "out" / "browser"
DOCS = ROOT / "docs"
RECORD = DOCS / "pictures.json"
CANVAS = "04 DyPE + SEGA 4K 4096px FLUX.1-Krea-dev or Nunchaku"  # both of this pack's nodes, a Flux.1 graph
PREVIEW = {"width": 3840, "height": 2160, "steps": 20}  # what tests/test_browser.py sets on the preview node
TITLE_H, MARGIN = 30, 14


def graph_box(workflow: dict) -> tuple[int, int, int, int]:
    """The graph's box on a 1920×1080 screen at the workflow's saved view, title bars included."""
    scale, (ox, oy) = workflow["extra"]["ds"]["scale"], workflow["extra"]["ds"]["offset"]
    xs = [v for n in workflow["nodes"] for v in (n["pos"][0], n["pos"][0] + n["size"][0])]
    ys = [v for n in workflow["nodes"] for v in (n["pos"][1] - TITLE_H, n["pos"][1] + n["size"][1])]
    return (round((min(xs) + ox) * scale) - MARGIN, round((min(ys) + oy) * scale) - MARGIN,
            round((max(xs) + ox) * scale) + MARGIN, round((max(ys) + oy) * scale) + MARGIN)


def save(image: Image.Image, name: str, width: int) -> None:
    image = image.convert("RGB")
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    image.save(DOCS / name, quality=84, optimize=True)
    print(f"wrote docs/{name} ({image.width}x{image.height}, {(DOCS / name).stat().st_size // 1024} KiB)")


def node_inputs() -> dict[str, dict[str, list[str]]]:
    """Our nodes' inputs as this host's schema gives them: all, in order, and those folded away as advanced."""
    sys.path.insert(0, str(ROOT / "tests"))
    import host

    host.load_pack_via_comfyui()
    import nodes

    out = {}
    for node_id in ("DyPESEGA_PatchModel", "DyPESEGA_SEGAAttention", "DyPESEGA_SchedulePreview"):
        info = nodes.NODE_CLASS_MAPPINGS[node_id].GET_NODE_INFO_V1()["input"]
        specs = {name: spec for group in ("required", "optional") for name, spec in info.get(group, {}).items()}
        out[node_id] = {"inputs": list(specs),
                        "advanced": [n for n, s in specs.items() if len(s) > 1 and s[1].get("advanced")]}
    return out


def main(shots: Path = SHOTS) -> int:
    wanted = [f"{CANVAS}.png", "template dialog A-Z.png", "template dialog A-Z.json", "schedule preview nodes.png"]
    missing = [name for name in wanted if not (shots / name).is_file()]
    if missing:
        print(f"missing in {shots}: {missing}; run tests/test_browser.py first", file=sys.stderr)
        return 1
    DOCS.mkdir(exist_ok=True)
    workflow = json.loads((ROOT / "workflows" / f"{CANVAS}.json").read_text(encoding="utf-8"))
    save(Image.open(shots / f"{CANVAS}.png").crop(graph_box(workflow)), "canvas.jpg", 1400)
    save(Image.open(shots / "template dialog A-Z.png"), "template-cards.jpg", 1100)
    save(Image.open(shots / "schedule preview nodes.png"), "schedule-preview.jpg", 1200)
    inputs = node_inputs()
    record = {
        "canvas.jpg": {"workflow": CANVAS,
                       "widgets": {str(n["id"]): [n["type"], n["widgets_values"]] for n in workflow["nodes"]},
                       "nodes": {k: v for k, v in inputs.items() if k in {n["type"] for n in workflow["nodes"]}}},
        "template-cards.jpg": {"cards": {name: hashlib.sha256((ROOT / "workflows" / f"{name}.jpg").read_bytes()).hexdigest()
                                         for name in json.loads((shots / "template dialog A-Z.json").read_text("utf-8"))}},
        "schedule-preview.jpg": {"values": PREVIEW, "nodes": {"DyPESEGA_SchedulePreview":
                                                              inputs["DyPESEGA_SchedulePreview"]}},
    }
    RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else SHOTS))  # another folder of screenshots
