"""Make the README's pictures (docs/*.jpg) from the browser test's screenshots in out/browser/.

Run the browser test first (on the 0.30 leg: its frontend shows no first-run banner), then this script:

    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 .venv/bin/python -m pytest -q tests/test_browser.py
    .venv/bin/python scripts/docs_screenshots.py

The canvas picture is cut to the graph: its box on screen follows from the workflow's saved view (the nodes' boxes
through ``extra.ds``), the same as the browser test checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "out" / "browser"
DOCS = ROOT / "docs"
CANVAS = "04 FLUX.1-Krea-dev 4K upscale-free DyPE + SEGA"  # both of this pack's nodes, a Flux.1 graph
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


def main() -> int:
    wanted = [f"{CANVAS}.png", "template dialog A-Z.png", "schedule preview nodes.png"]
    missing = [name for name in wanted if not (SHOTS / name).is_file()]
    if missing:
        print(f"missing in {SHOTS}: {missing}; run tests/test_browser.py first", file=sys.stderr)
        return 1
    DOCS.mkdir(exist_ok=True)
    workflow = json.loads((ROOT / "workflows" / f"{CANVAS}.json").read_text(encoding="utf-8"))
    save(Image.open(SHOTS / f"{CANVAS}.png").crop(graph_box(workflow)), "canvas.jpg", 1400)
    save(Image.open(SHOTS / "template dialog A-Z.png"), "template-cards.jpg", 1100)
    save(Image.open(SHOTS / "schedule preview nodes.png"), "schedule-preview.jpg", 1200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
