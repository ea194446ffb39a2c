"""The README's pictures (docs/*.jpg, made by scripts/docs_screenshots.py from the browser test's screenshots) still
show the pack as it is: docs/pictures.json records what each shows (the canvas's workflow and its widgets, the
pictured nodes' inputs, the template cards on screen), and this compares that record with the live schema and the
shipped workflows. A failure means: run the browser test and scripts/docs_screenshots.py again (its docstring)."""

from __future__ import annotations

import hashlib
import inspect
import json

import host
import pytest

pytestmark = pytest.mark.usefixtures("comfy_host")

DOCS = host.PACK_DIR / "docs"
RECORD = json.loads((DOCS / "pictures.json").read_text(encoding="utf-8"))
WORKFLOWS = host.PACK_DIR / "workflows"
REDO = "the picture is stale: rerun the browser test, then scripts/docs_screenshots.py"


@pytest.fixture(scope="module")
def registry():
    import nodes

    host.load_pack_via_comfyui()
    return nodes


def test_every_recorded_picture_is_committed():
    assert set(RECORD) == {"canvas.jpg", "schedule-preview.jpg", "template-cards.jpg"}
    assert all((DOCS / name).is_file() for name in RECORD)


def test_the_canvas_shows_the_workflow_as_shipped():
    shown = RECORD["canvas.jpg"]
    workflow = json.loads((WORKFLOWS / f"{shown['workflow']}.json").read_text(encoding="utf-8"))
    assert {str(n["id"]): [n["type"], n["widgets_values"]] for n in workflow["nodes"]} == shown["widgets"], REDO


@pytest.mark.parametrize("picture", ["canvas.jpg", "schedule-preview.jpg"])
def test_the_pictured_nodes_have_the_inputs_shown(registry, picture):
    from comfy_api.latest import io

    has_advanced = "advanced" in inspect.signature(io.Input.__init__).parameters
    for node_id, shown in RECORD[picture]["nodes"].items():
        info = registry.NODE_CLASS_MAPPINGS[node_id].GET_NODE_INFO_V1()["input"]
        specs = {name: spec for group in ("required", "optional") for name, spec in info.get(group, {}).items()}
        assert list(specs) == shown["inputs"], f"{picture}: {node_id}'s inputs changed; {REDO}"
        if has_advanced:  # the pictures come from the 0.30 host, whose frontend folds these away
            advanced = [n for n, s in specs.items() if len(s) > 1 and s[1].get("advanced")]
            assert advanced == shown["advanced"], f"{picture}: {node_id}'s advanced inputs changed; {REDO}"


def test_the_template_cards_are_the_first_shipped_ones_from_a_to_z():
    shown = RECORD["template-cards.jpg"]["cards"]
    stems = sorted(p.stem for p in WORKFLOWS.glob("*.json"))
    assert shown and list(shown) == stems[:len(shown)], REDO
    for stem, digest in shown.items():  # and each card's own picture is the one in the screenshot
        assert hashlib.sha256((WORKFLOWS / f"{stem}.jpg").read_bytes()).hexdigest() == digest, f"{stem}: {REDO}"
