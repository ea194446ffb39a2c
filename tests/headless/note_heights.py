"""The height of each workflow's note, measured in the frontends the test hosts pin, never estimated.

The frontends lay the same markdown out differently (1.32: Arial, 1.47 and 1.53: their bundled Inter, taller
lines), so a note sized from characters per line was cut off on one of them; and a user's system may draw it in
another font still. Here each note text is loaded into the real
frontend (headless/browser.py), its rendered height read from the DOM (scrollHeight of the markdown element, plus
the node's own frame), and the result committed in note_heights.json, keyed by a hash of the text and the note's
width. The generator (make_workflows.py) sizes a note as the tallest measurement over FRONTENDS plus MARGIN, and
refuses to write a note whose text was not measured in each of them; tests/test_browser.py checks on both hosts
that every note's text is entirely visible.

The same session measures every node's height with Nodes 2.0 on and its advanced inputs shown (node_heights.py),
which the generator leaves room for. Measure after changing a note or a node's inputs (each command measures in the
frontend its host pins, or the one named):

    .venv/bin/python tests/headless/note_heights.py
    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 .venv/bin/python tests/headless/note_heights.py
    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 DYPE_SEGA_FRONTEND=1.53.6 .venv/bin/python tests/headless/note_heights.py
    COMFYUI_PATH=$PWD/.hosts/comfyui-0.30.0 DYPE_SEGA_FRONTEND=1.58.1 .venv/bin/python tests/headless/note_heights.py

(``--nodes-only``: the nodes alone, after a change to a node's inputs.)
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

DATA = Path(__file__).resolve().with_name("note_heights.json")
# The frontends the two test hosts pin (ComfyUI 0.3.75: 1.32.9, 0.30.0: 1.47.12; their requirements.txt), the one
# ComfyUI 0.38 pins and the newest on PyPI (server.EXTRA_FRONTENDS, measured on the 0.30 host with
# DYPE_SEGA_FRONTEND=<version>).
FRONTENDS = ("1.32.9", "1.47.12", "1.53.6", "1.58.1")
# Each is measured twice: in its own font, and in a wider one, as a user's system may substitute (DejaVu Sans, wider
# than Arial and Inter, is Debian's default sans and chromium's dependency). The note is sized to the taller.
WIDE = " wide"
WIDE_FONT = "DejaVu Sans"
WIDE_CSS = f".ProseMirror, .ProseMirror * {{ font-family: '{WIDE_FONT}', sans-serif !important; }}"
MARGIN = 12  # graph units below the tallest measured text: about one line
PLACEHOLDER = 100  # while measuring: a note this short overflows, so its scrollHeight is the text's whole height


class NotMeasured(LookupError):
    pass


_measuring = False


def key(text: str, width: int) -> str:
    return hashlib.sha256(f"{width}\n{text}".encode()).hexdigest()[:16]


def load() -> dict[str, dict[str, list[float]]]:
    return json.loads(DATA.read_text(encoding="utf-8")) if DATA.is_file() else {}


def measuring() -> bool:
    """Whether the workflows are being built for a measurement (every measured height then stands in)."""
    return _measuring


def height(text: str, width: int) -> int:
    """The note's node height: its text measured in every frontend of FRONTENDS, the tallest, plus MARGIN."""
    if _measuring:
        return PLACEHOLDER
    table, k = load(), key(text, width)
    missing = [f for v in FRONTENDS for f in (v, v + WIDE) if k not in table.get(f, {})]
    if missing:
        first = text.splitlines()[0] if text else ""
        raise NotMeasured(f"the note {first!r} ({width} wide) was never measured in frontend {', '.join(missing)}: "
                          "run tests/headless/note_heights.py on each test host (see its docstring)")
    return int(max(content + frame for content, frame in (table[f][k] for v in FRONTENDS for f in (v, v + WIDE)))
               + MARGIN)


def measure(notes: bool = True) -> str:
    """Measure every shipped workflow's note in the frontend the current host pins (or DYPE_SEGA_FRONTEND names), in
    its own font and in WIDE_FONT (``notes``), and its nodes (node_heights.py); rewrite the frontend's tables. Returns
    the frontend version."""
    global _measuring
    import host

    from . import browser, make_workflows, node_heights

    reason = browser.missing()
    if reason:
        raise RuntimeError(reason)
    _measuring = True
    try:
        workflows = make_workflows.build_all()
    finally:
        _measuring = False
    host.comfyui_root()
    with tempfile.TemporaryDirectory() as tmp, browser.session(Path(tmp)) as s:
        browser.close_dialogs(s.page)
        nodes = node_heights.measure_all(s.page, workflows)
        if notes:
            measured = _measure_all(s.page, workflows)
            s.page.add_style_tag(content=WIDE_CSS)
            wide = _measure_all(s.page, workflows)
        frontend = s.frontend
    node_heights.write(frontend, nodes)
    if not notes:
        return frontend
    table = load()
    table[frontend], table[frontend + WIDE] = measured, wide
    lines = [f"  {json.dumps(frontend)}: {{\n" + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in rows.items())
             + "\n  }" for frontend, rows in sorted(table.items())]
    DATA.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return frontend


def _measure_all(page, workflows: dict[str, dict]) -> dict[str, list[float]]:
    from . import browser

    measured: dict[str, list[float]] = {}
    for name, workflow in workflows.items():
        note = next(n for n in workflow["nodes"] if n["type"] == "MarkdownNote")
        browser.load_graph(page, workflow, name)
        m = browser.note_metrics(page)
        if m["content"] <= m["shown"]:
            raise RuntimeError(f"{name}: the note did not overflow its placeholder height; cannot measure")
        measured[key(note["widgets_values"][0], int(note["size"][0]))] = [m["content"], m["node"] - m["shown"]]
        logger.info("%s: %s", name, m)
    return dict(sorted(measured.items()))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from headless import node_heights, note_heights

    version = note_heights.measure(notes="--nodes-only" not in sys.argv[1:])
    print(f"measured the notes and nodes in frontend {version}: {DATA}, {node_heights.DATA}")
