"""What a user sees of the shipped workflows before running one (workflows.md §7, offline half of test_browser.py):
the template card's picture and name, the saved view, the registry icon, the docs' list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from headless import card_names, cards, graph, make_workflows, notes, registry, runner

WORKFLOWS = sorted(runner.WORKFLOWS_DIR.glob("*.json"))
ids = [p.name for p in WORKFLOWS]


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_thumbnail_is_this_workflows_card(path: Path):
    # The template browser shows <name>.jpg on the card. Regenerated from the graph, it must be the same picture:
    # the same JPEG pixels (a stale caption changes a few hundred pixels by far more than JPEG's rounding), not a
    # mean difference, which a changed word hides.
    import io

    from PIL import Image, ImageChops

    committed = Image.open(path.with_suffix(".jpg"))
    assert committed.format == "JPEG" and committed.size == (cards.THUMB, cards.THUMB)
    fresh = Image.open(io.BytesIO(cards.thumbnail_bytes(runner.load_workflow(path))))
    diff = ImageChops.difference(committed.convert("RGB"), fresh.convert("RGB")).convert("L")
    changed = sum(diff.point(lambda v: v > 24).histogram()[1:])
    assert changed == 0, (f"{path.with_suffix('.jpg').name} is stale ({changed} pixels differ, box {diff.getbbox()}): "
                          "run tests/headless/make_workflows.py")


def test_cards_tell_recipes_apart_and_sort_featured_first():
    # A → Z (and a by-name listing) shows the published SEGA recipe and plain DyPE on Flux.1-dev first; every image
    # card's name carries what people search for near its start (the template search's reach: test_browser.py).
    names = sorted(p.stem for p in WORKFLOWS)
    assert names[:2] == [make_workflows.shipped(k)[:-5] for k in (make_workflows.FLUX_KREA_SEGA,
                                                                 make_workflows.FLUX_DEV_4096)]
    for name in names:  # the words on the card, where frontends 1.32 and 1.47 search (make_workflows.card_name)
        words = re.fullmatch(r"\d\d (.*?)( video)? (\d+(?:\.\d)?K(?: UHD| panorama| 3:1)?|\d+p) (\d+px|\d+x\d+) (.*?)"
                             r"(?: \d+ frames)?", name)
        assert words, f"{name}: not number, recipe, [video], size, model"
        for start in (words.start(i) for i in range(1, 6) if words[i]):
            assert start <= card_names.SEARCH_REACH, f"{name}: {name[start:]!r} starts past the search's reach"
    assert {cards.card_facts(runner.load_workflow(p))["recipe"] for p in WORKFLOWS} == set(cards.RECIPES)
    # "upscale" names exactly the cards that enlarge your own image: a cascade whose base pass starts from Load Image
    enlarge = {p.stem for p in WORKFLOWS if {"LoadImage", cards.HIFLOW} <= {n["type"] for n in
                                                                           runner.load_workflow(p)["nodes"]}}
    assert enlarge and {name for name in names if "upscale" in name.lower()} == enlarge


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_the_card_picture_names_the_model_as_the_file_does(path: Path):
    # The same words on the picture and in the title under it (spelling aside: "FLUX.2 [dev]" / "FLUX.2-dev").
    def letters(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    model = re.fullmatch(r"\d\d .*? (?:\d+px|\d+x\d+) (.*?)(?: or Nunchaku)?(?: \d+ frames)?", path.stem)[1]
    assert letters(cards.card_facts(runner.load_workflow(path))["model"]) == letters(model)


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_name_card_and_note_agree_on_nunchaku_and_the_comfyui_needed(path: Path):
    # "or Nunchaku" in the name (the template search finds it), "also on Nunchaku FLUX" on the card, exactly where the
    # note says how to run the graph on Nunchaku; a model newer than every host: its ComfyUI on the card and at the
    # top of the note (issue 41), before the frontend's missing-node dialog says so.
    workflow = runner.load_workflow(path)
    note = next(n for n in workflow["nodes"] if n["type"] == "MarkdownNote")["widgets_values"][0]
    also = cards.card_facts(workflow)["also"]
    nunchaku = notes.NUNCHAKU_FLUX in note
    assert path.stem.endswith(f" {card_names.NUNCHAKU}") == nunchaku
    needs = {registry.NEWER_HOST[n["widgets_values"][0]] for n in workflow["nodes"]
             if n["type"] == "UNETLoader" and n["widgets_values"][0] in registry.NEWER_HOST}
    if needs:
        assert also == f"needs ComfyUI {max(needs)} or newer"
        assert f"**Needs ComfyUI {max(needs)} or newer**" in note.split("\n\n")[1], "not at the top of the note"
    else:
        assert also == ("also on Nunchaku FLUX (int4 / fp4)" if nunchaku else None)


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_opens_with_everything_on_screen_and_apart(path: Path):
    # Offline half of the browser check: the saved view is the frontend's fit of the graph (what frontend 1.47 shows
    # for a template card); at it every node, title included, lies in the part of a 1920×1080 window the frontend
    # leaves to the canvas (sidebar 60 px, chrome 140 px high, minimap right of 1664 px), at a zoom where it draws
    # text; no two nodes overlap, and the 22 units above each badged node's title are free of other nodes. The zoom
    # floor, 0.74: Wan 2.2 and the cascades with the image under them (27, 28) need it with the room each node takes
    # unfolded in Nodes 2.0 (below).
    wf = runner.load_workflow(path)
    boxes = [(*n["pos"], *n["size"]) for n in wf["nodes"]]
    assert wf["extra"]["ds"] == graph.fit_view(boxes)
    scale, (ox, oy) = wf["extra"]["ds"]["scale"], wf["extra"]["ds"]["offset"]
    assert scale >= 0.74
    title = graph.TITLE_H
    rects = {n["id"]: (n["pos"][0], n["pos"][1] - title, n["pos"][0] + n["size"][0], n["pos"][1] + n["size"][1])
             for n in wf["nodes"]}
    for node in wf["nodes"]:
        left, top, right, bottom = ((v + o) * scale for v, o in zip(rects[node["id"]], (ox, oy, ox, oy), strict=True))
        assert left >= 60 and top >= 140 and right <= 1664 and bottom <= 1080, (node["type"], left, top, right, bottom)
        x0, y0, x1, _ = rects[node["id"]]
        badge = (x0, y0 - 22, x1, y0)
        for other, (a, b, c, d) in rects.items():
            if other == node["id"]:
                continue
            assert not (min(x1, c) > max(x0, a) and min(rects[node["id"]][3], d) > max(y0, b)), (node["type"], other)
            if node["type"] in graph.BADGED:
                assert not (min(badge[2], c) > max(badge[0], a) and min(badge[3], d) > max(badge[1], b)), \
                    f"{node['type']}'s badge would sit on node {other}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_every_node_has_room_for_its_advanced_inputs_in_nodes_2(path: Path):
    # Offline half of test_browser_ui.py's unfolded check: as tall as Nodes 2.0 draws it with its advanced inputs
    # shown (headless/node_heights.py, measured in every frontend), no node reaches another node or leaves the window
    # at the saved view (issue 41: DyPE Patch Model over SEGA Attention, the cascades over their decode).
    wf = runner.load_workflow(path)
    scale, (_, oy) = wf["extra"]["ds"]["scale"], wf["extra"]["ds"]["offset"]
    title = graph.TITLE_H
    unfolded = {n["id"]: (n["pos"][0], n["pos"][1] - title, n["pos"][0] + n["size"][0],
                          n["pos"][1] + max(n["size"][1], graph.unfolded_height(n["type"], int(n["size"][0]))))
                for n in wf["nodes"] if n["type"] in graph.SHAPES}
    saved = {n["id"]: (n["pos"][0], n["pos"][1] - title, n["pos"][0] + n["size"][0], n["pos"][1] + n["size"][1])
             for n in wf["nodes"]}
    for node_id, (x0, y0, x1, y1) in unfolded.items():
        assert (y1 + oy) * scale <= 1080, f"node {node_id} unfolded runs off the window"
        for other, (a, b, c, d) in saved.items():
            assert other == node_id or not (min(x1, c) > max(x0, a) and min(y1, d) > max(y0, b)), \
                f"node {node_id} unfolded reaches node {other}"


def test_registry_icon_is_ours_current_and_linked():
    import re

    from PIL import Image, ImageChops

    # `key = "value"` lines of pyproject.toml (tomllib is 3.11+, the pack supports 3.10)
    meta = dict(re.findall(r'^(\w+) = "(.*)"$', (runner.WORKFLOWS_DIR.parent / "pyproject.toml").read_text(), re.M))
    repo = meta["Repository"].removeprefix("https://github.com/")
    assert meta["Icon"] == f"https://raw.githubusercontent.com/{repo}/main/icon.png"
    assert meta["Documentation"].startswith(meta["Repository"]) and meta["Issues"] == f"{meta['Repository']}/issues"
    shipped = Image.open(cards.ICON)
    assert shipped.format == "PNG" and shipped.size == (400, 400)
    changed = ImageChops.difference(shipped.convert("RGB"), cards.icon()).getbbox()
    assert changed is None, f"icon.png is stale (differs in {changed}): run make_workflows.py"


def test_docs_list_every_workflow_and_readme_pictures_exist():
    # docs/workflows.md's table names each shipped workflow once, by its file name; README's pictures are committed.
    import re

    root = runner.WORKFLOWS_DIR.parent
    table = (root / "docs" / "workflows.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d (?:edit )?(?:DyPE|SEGA|HiFlow|I-Max|HRDiT)[^|]*?)(?: [¹²])? \|", table, re.M)  # ¹ ²: newer hosts
    assert sorted(rows) == sorted(p.stem for p in WORKFLOWS)
    readme = (root / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert pictures and all((root / p).is_file() for p in pictures), pictures
