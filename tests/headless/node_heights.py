"""The height each node of the shipped graphs takes with "Nodes 2.0" on and its advanced inputs shown, measured in the
frontends, never estimated (issue 41).

Nodes 2.0 draws a node as tall as its content. "Show advanced inputs" pressed on a node (frontends 1.47 and later, on a
host with advanced inputs) unfolds every input and adds a "Hide advanced inputs" button: taller than the classic
height the file saves (DyPE Patch Model 210 → 278 graph units, HRDiT Cascade 638 → 806), and taller than the 1.32
renderer draws the node with all its inputs. The generator leaves that room below each node (graph.Column), so the
node under it is never covered, folded or unfolded.

Measured with the notes (note_heights.py runs this in the same browser session, on each frontend of its FRONTENDS):
every shipped workflow loaded with Nodes 2.0 on, each node saved 1 unit high (the renderer grows it to its content),
every node's "Show advanced inputs" pressed, and each node's element's height read, less the title bar, in the
file's graph units: divided by the frontend's own rescale where it makes one (1.32 grows a classic graph 1.2× on
open, its default "Auto-scale layout": the room below each node grows with it). Committed in node_heights.json per frontend, keyed by
node type, width and inputs; ``None`` where the host has no such node (the frontend draws the saved box). The
generator takes the tallest over FRONTENDS and refuses a node that was not measured in each of them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from . import nodes2, note_heights

logger = logging.getLogger(__name__)

DATA = Path(__file__).resolve().with_name("node_heights.json")


def key(node_type: str, width: int, inputs: list[str]) -> str:
    """``"DyPESEGA_PatchModel 280 1a2b3c4d"``: its type, width and a digest of its input names (a new input is a new
    node to measure)."""
    return f"{node_type} {width} {hashlib.sha256(','.join(inputs).encode()).hexdigest()[:8]}"


def load() -> dict[str, dict[str, float | None]]:
    return json.loads(DATA.read_text(encoding="utf-8")) if DATA.is_file() else {}


def room(node_type: str, width: int, inputs: list[str]) -> float:
    """The height to leave for a node's body: its tallest measurement over note_heights.FRONTENDS (0 while measuring,
    and where no frontend's host has the node: it is drawn at its saved size)."""
    if note_heights.measuring():
        return 0
    table, k = load(), key(node_type, width, inputs)
    missing = [f for f in note_heights.FRONTENDS if k not in table.get(f, {})]
    if missing:
        raise note_heights.NotMeasured(f"{node_type} ({width} wide, these inputs) was never measured in frontend "
                                       f"{', '.join(missing)}: run tests/headless/note_heights.py on each test host "
                                       "(see its docstring)")
    return max((table[f][k] or 0) for f in note_heights.FRONTENDS)


# Every node's element (the note aside) in graph units, less the title bar; null for a type this host lacks.
_BODIES = """() => Object.fromEntries(app.graph.nodes.filter(n => n.type !== 'MarkdownNote').map(n => {
  const el = document.querySelector(`[data-node-id="${n.id}"]`);
  const known = n.type in LiteGraph.registered_node_types;
  return [n.id, known && el ? el.getBoundingClientRect().height / app.canvas.ds.scale - LiteGraph.NODE_TITLE_HEIGHT
                            : null];
}))"""


def measure_all(page, workflows: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Every node of ``workflows`` (name → UI JSON) measured as the module docstring says; key → height."""
    from . import browser

    page.evaluate("() => app.extensionManager.setting.set('Comfy.VueNodes.Enabled', true)")
    measured: dict[str, float | None] = {}
    for name, workflow in workflows.items():
        least = copy.deepcopy(workflow)  # every node saved 1 high: the renderer grows each to its content
        for node in least["nodes"]:
            node["size"][1] = 1 if node["type"] != "MarkdownNote" else node["size"][1]
        browser.load_graph(page, least, name)
        nodes2.settled(page, len(workflow["nodes"]))
        nodes2.show_advanced(page)
        nodes2.settled(page, len(workflow["nodes"]))
        # the frontend's own rescale of the file's geometry (1.32: 1.2x, nodes2.py), read from the note's width
        grown = nodes2.grown(page, workflow)
        bodies = {i: None if b is None else b / grown for i, b in page.evaluate(_BODIES).items()}
        for node in workflow["nodes"]:
            if node["type"] == "MarkdownNote":
                continue
            body = bodies[str(node["id"])]
            k = key(node["type"], int(node["size"][0]), [s["name"] for s in node["inputs"]])
            if body is not None:
                body = round(body, 1)
            if k in measured and measured[k] != body:
                logger.info("%s: %s measured %s, before %s", name, k, body, measured[k])
                body = max(body or 0, measured[k] or 0)
            measured[k] = body
    page.evaluate("() => app.extensionManager.setting.set('Comfy.VueNodes.Enabled', false)")  # the notes: classic
    return dict(sorted(measured.items()))


def write(frontend: str, measured: dict[str, float | None]) -> None:
    """Replace ``frontend``'s table in node_heights.json, one line a node."""
    table = load()
    table[frontend] = measured
    lines = [f"  {json.dumps(f)}: {{\n" + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in rows.items())
             + "\n  }" for f, rows in sorted(table.items())]
    DATA.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
