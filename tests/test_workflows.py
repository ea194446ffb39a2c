"""The shipped example workflows, checked on the real ComfyUI host (workflows.md §7).

1. every file parses and is what tests/headless/make_workflows.py generates;
2. every node type is registered and every widget slot / link agrees with the live schema (headless/uicheck.py);
3. our converter's API prompt passes ComfyUI's own ``execution.validate_prompt``;
4. the prompt runs end to end with tiny stand-in models (headless/runner.py), our nodes active above base.
Tests that need our nodes skip only while the pack source does not define them yet. What a user sees of them
before running (cards, saved view, icon, docs): test_workflow_cards.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from headless import (
    graph,
    hiflow_workflows,
    hrdit_workflows,
    imax_workflows,
    make_workflows,
    newest_workflows,
    paper_workflows,
    registry,
    runner,
    uicheck,
    video_workflows,
)
from headless.convert import ui_to_api

WORKFLOWS = sorted(runner.WORKFLOWS_DIR.glob("*.json"))
SHIPPED = {make_workflows.shipped(key) for key in (
    make_workflows.FLUX_DEV_4096, make_workflows.FLUX_KREA_SEGA, make_workflows.FLUX_KREA_4096, make_workflows.QWEN_4096,
    make_workflows.FLUX_DEV_UHD, *(spec.file for spec in make_workflows.SPECS), *video_workflows.NAMES,
    *paper_workflows.NAMES, *hiflow_workflows.NAMES, *newest_workflows.NAMES, *imax_workflows.NAMES,
    *hrdit_workflows.NAMES)}
VIDEO_FILES = {make_workflows.shipped(name) for name in video_workflows.NAMES}
# The cascades (HiFlow, I-Max, HRDiT): no KSampler, 4x out
CASCADE_NODES = {**{make_workflows.shipped(n): hiflow_workflows.HIFLOW for n in hiflow_workflows.NAMES},
                 **{make_workflows.shipped(n): imax_workflows.IMAX for n in imax_workflows.NAMES},
                 **{make_workflows.shipped(n): hrdit_workflows.HRDIT for n in hrdit_workflows.NAMES}}
CASCADE_FILES = set(CASCADE_NODES)
IMAGE_WORKFLOWS = [p for p in WORKFLOWS if p.name not in VIDEO_FILES | CASCADE_FILES]  # video: test_video_workflows
CASCADES = [p for p in WORKFLOWS if p.name in CASCADE_FILES]
LOADER_FILE_INPUTS = {"UNETLoader": ["unet_name"], "DualCLIPLoader": ["clip_name1", "clip_name2"],
                      "CLIPLoader": ["clip_name"], "QuadrupleCLIPLoader": [f"clip_name{i}" for i in range(1, 5)],
                      "VAELoader": ["vae_name"]}
PIXEL_SPACE = "pixel_space"  # VAELoader's built-in entry for pixel-space models: no file
ids = [p.name for p in WORKFLOWS]


@pytest.fixture(scope="module")
def comfy() -> registry.Host:
    return registry.boot()


@pytest.fixture(scope="module")
def object_info(comfy):
    return comfy.object_info()


@pytest.fixture
def our_nodes(comfy, object_info) -> None:
    """Skip while the pack does not define our nodes yet; once its source does, a missing node is a failure."""
    if registry.OUR_NODE in object_info:
        return
    if comfy.pack_defines_our_nodes():
        pytest.fail(f"the pack defines {registry.OUR_NODE} but ComfyUI's registry lacks it; "
                    f"pack load: {comfy.pack_error or 'loaded, node not registered'}")
    reason = f"{registry.OUR_NODE} is not defined by the pack yet (pack load: {comfy.pack_error or 'ok'})"
    print(reason)
    pytest.skip(reason)


@pytest.fixture
def this_host_has_it(request, comfy) -> None:
    """Skip a workflow whose model (or its text encoder) this ComfyUI does not have, with the reason; a workflow
    the generator marks as for newer hosts must be skipped for a reason, never silently run or fail."""
    path = request.getfixturevalue("path")
    reason = runner.host_lacks(runner.load_workflow(path))
    if reason:
        pytest.skip(f"{path.stem}: {reason}")


def test_all_examples_are_shipped_and_generated():
    assert {p.name for p in WORKFLOWS} == SHIPPED
    for name, workflow in make_workflows.build_all().items():
        committed = (runner.WORKFLOWS_DIR / name).read_text(encoding="utf-8")
        assert committed == make_workflows.render(workflow), f"{name} is stale: run tests/headless/make_workflows.py"


def test_each_workflow_has_a_pack_family_and_only_newer_host_ones_skip(comfy):
    # The family comes from the model file (registry.MODEL_FAMILY): it must name a pack adapter, and a workflow the
    # generator does not mark as for newer hosts must run on every host (never skip by accident).
    newer = {make_workflows.shipped(spec.file) for spec in make_workflows.SPECS if spec.newer_host} | {
        make_workflows.shipped(name) for name in newest_workflows.NAMES}  # models no tested host has
    for path in WORKFLOWS:
        wf = runner.load_workflow(path)
        for unet in (n["widgets_values"][0] for n in wf["nodes"] if n["type"] == "UNETLoader"):
            assert runner.adapter(registry.MODEL_FAMILY[unet]).name == registry.MODEL_FAMILY[unet]
        lacks = runner.host_lacks(wf)
        assert not lacks or path.name in newer, f"{path.name} would be skipped on this host: {lacks}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_workflow_parses_and_documents_itself(path: Path):
    wf = json.loads(path.read_text(encoding="utf-8"))
    assert wf["version"] == 0.4 and wf["nodes"] and wf["links"]
    notes = [n["widgets_values"][0] for n in wf["nodes"] if n["type"] == "MarkdownNote"]
    assert len(notes) == 1
    ours = [n for n in wf["nodes"] if n["type"] in (*runner.OUR_NODES, hiflow_workflows.HIFLOW, imax_workflows.IMAX,
                                                   hrdit_workflows.HRDIT)]
    assert ours and all(n["properties"]["cnr_id"] == "comfyui-dype-sega" for n in ours)
    assert all(n["properties"]["Node name for S&R"] == n["type"] for n in wf["nodes"] if n["type"] != "MarkdownNote")
    types = {n["type"] for n in wf["nodes"]}
    video = path.name in VIDEO_FILES
    text = next((t for t in ("TextEncodeQwenImageEditPlus", "TextEncodeQwenImage21") if t in types), "CLIPTextEncode")
    cascade = path.name in CASCADE_FILES
    sampler = CASCADE_NODES[path.name] if cascade else "KSampler"
    assert types >= {"UNETLoader", "VAELoader", text} | (
        {"EmptyHunyuanLatentVideo", "SaveWEBM"} if video else {sampler, "SaveImage"})
    assert not cascade or not types & {"KSampler", "KSamplerAdvanced"}  # the cascade samples every pass itself
    if not video:
        starts = {*graph.LATENT_NODES, "VAEEncode"} if cascade else set(graph.LATENT_NODES)  # HiFlow: or an image
        assert len(types & starts) == 1  # (an edit's VAEEncode encodes its reference, not the start)
    pixel_space = _node(wf, "VAELoader")["widgets_values"][0] == PIXEL_SPACE
    assert ("VAEDecode" if pixel_space else "VAEDecodeTiled") in types  # tiled wherever there is a VAE to tile
    assert "ModelSamplingFlux" not in {n["type"] for n in wf["nodes"]}
    for node in wf["nodes"]:  # every model file the graph names is listed in its note, with its folder
        for slot in LOADER_FILE_INPUTS.get(node["type"], []):
            value = node["widgets_values"][[s["name"] for s in node["inputs"]].index(slot)]
            assert value in notes[0], f"{value} not explained in the note"
            if value == PIXEL_SPACE:
                continue
            links = {m["name"]: m["directory"] for m in node["properties"]["models"]}
            assert value in registry.MODEL_FILES[links[value]], f"{value}: download folder {links[value]}"
    assert "estimate" in notes[0] and "24 GB" in notes[0] and "80 GB" in notes[0]


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_ui_graph_matches_live_registry(path: Path, object_info, our_nodes, this_host_has_it):
    wf = runner.load_workflow(path)
    assert uicheck.check_workflow(wf, object_info, registry.VIRTUAL_NODES) == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=ids)
def test_api_prompt_passes_comfyui_validation(path: Path, object_info, our_nodes, this_host_has_it):
    prompt = ui_to_api(runner.load_workflow(path), object_info)
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    video = path.name in VIDEO_FILES
    assert [prompt[i]["class_type"] for i in result.outputs] == ["SaveWEBM" if video else "SaveImage"]


@pytest.mark.parametrize("path", IMAGE_WORKFLOWS, ids=[p.name for p in IMAGE_WORKFLOWS])
def test_runs_end_to_end_on_tiny_models(path: Path, tmp_path: Path, our_nodes, this_host_has_it):
    result, plan = runner.run_workflow_tiny(path, tmp_path)
    assert result.success, result.error()
    assert len(result.images) == 1 and result.images[0].is_file() and result.images[0].stat().st_size > 0
    (stats,) = result.stats
    width, height = plan.latent_px[0]
    assert stats["shape"] == [1, height, width, 3]
    assert stats["finite"] and stats["std"] > 0
    assert plan.base_px and all(b < min(width, height) for b in plan.base_px.values()), "our nodes must be active"


@pytest.mark.parametrize("path", CASCADES, ids=[p.name for p in CASCADES])
def test_cascade_runs_on_tiny_models_to_four_times_the_base(path: Path, tmp_path: Path, our_nodes):
    # A cascade's output is its last stage: 4x the base latent per side (HiFlow's scales 2, 4; I-Max's 4), never the
    # latent's size; the base and every stage run fewer steps, in proportion (the demo's --steps).
    result, plan = runner.run_workflow_tiny(path, tmp_path, side=256, steps=4)
    assert result.success, result.error()
    imax = CASCADE_NODES[path.name] == imax_workflows.IMAX
    hrdit = CASCADE_NODES[path.name] == hrdit_workflows.HRDIT
    assert plan.scales == ([4.0] if imax else [2.0, 4.0]) and plan.latent_px == [(64, 64)]
    assert plan.image_px == (256, 256) and plan.base_steps == (4, 30)
    assert plan.stage_steps == (([4], [30]) if imax else ([2, 1], [17, 10]) if hrdit else ([2, 1], [16, 10]))
    (stats,) = result.stats
    assert stats["shape"] == [1, 256, 256, 3]
    assert stats["finite"] and stats["std"] > 0


def test_our_nodes_change_the_image_only_above_their_base(tmp_path: Path, our_nodes):
    path = runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_KREA_4096)
    wf = runner.load_workflow(path)
    plain, _ = runner.make_tiny(runner.to_api(runner.bypass_ours(wf)), side=128)
    active, plan = runner.make_tiny(runner.to_api(wf), side=128)
    assert all(b < 128 for b in plan.base_px.values())
    at_base, _ = runner.make_tiny(runner.to_api(wf), side=128, base_px=128)
    digests = {}
    for name, prompt in (("plain", plain), ("active", active), ("at_base", at_base)):
        result = runner.execute(prompt, tmp_path / name)
        assert result.success, result.error()
        digests[name] = result.stats[0]["sha1"]
    assert digests["active"] != digests["plain"], "DyPE + SEGA above base left the image unchanged"
    assert digests["at_base"] == digests["plain"], "at the trained size the patched model must equal the plain one"


@pytest.mark.parametrize("name", [make_workflows.shipped(make_workflows.FLUX_DEV_UHD), make_workflows.shipped(make_workflows.QWEN_4096)])
def test_stock_graph_runs_with_our_nodes_bypassed(name: str, tmp_path: Path, comfy):
    # Independent of our nodes: loaders → prompts → sampler → tiled decode → save, for both families.
    prompt = runner.to_api(runner.bypass_ours(runner.load_workflow(runner.WORKFLOWS_DIR / name)))
    assert not any(n["class_type"] in runner.OUR_NODES for n in prompt.values())
    result = runner.execute(runner.make_tiny(prompt)[0], tmp_path)
    assert result.success, result.error()
    assert result.images[0].is_file() and result.stats[0]["finite"]


def _node(wf: dict, node_type: str) -> dict:
    return next(n for n in wf["nodes"] if n["type"] == node_type)


def _link(wf: dict, src: dict, link_id: int, dst: dict, dst_input: str) -> None:
    slot = next(i for i, s in enumerate(dst["inputs"]) if s["name"] == dst_input)
    dst["inputs"][slot]["link"] = link_id
    src["outputs"][0]["links"].append(link_id)
    wf["links"].append([link_id, src["id"], 0, dst["id"], slot, src["outputs"][0]["type"]])


def test_converter_follows_reroute_bypass_mute_and_primitive(object_info):
    wf = runner.bypass_ours(runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_DEV_4096)))
    ksampler, decode, vae = _node(wf, "KSampler"), _node(wf, "VAEDecodeTiled"), _node(wf, "VAELoader")
    negative_link = next(s["link"] for s in ksampler["inputs"] if s["name"] == "negative")
    next(n for n in wf["nodes"] if n["id"] == wf["links"][negative_link - 1][1])["mode"] = 2  # mute
    # Reroute on the VAE link, PrimitiveNode on the seed widget.
    vae_link = next(s for s in decode["inputs"] if s["name"] == "vae")
    wf["links"] = [lk for lk in wf["links"] if lk[0] != vae_link["link"]]
    vae["outputs"][0]["links"] = []
    reroute = {"id": 100, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": None}],
               "outputs": [{"name": "", "type": "VAE", "links": []}]}
    primitive = {"id": 101, "type": "PrimitiveNode", "mode": 0, "inputs": [], "widgets_values": [99, "fixed"],
                 "outputs": [{"name": "INT", "type": "INT", "links": []}]}
    wf["nodes"] += [reroute, primitive]
    _link(wf, vae, 100, reroute, "")
    _link(wf, reroute, 101, decode, "vae")
    _link(wf, primitive, 102, ksampler, "seed")
    prompt = ui_to_api(wf, object_info)
    ks = prompt[str(ksampler["id"])]["inputs"]
    assert ks["model"] == [str(_node(wf, "UNETLoader")["id"]), 0]  # through the bypassed DyPE node
    assert "negative" not in ks  # its source is muted: the frontend deletes the input
    assert ks["seed"] == 99 and "fixed" not in ks.values()  # primitive value wins; control value never sent
    assert set(ks) == {"model", "positive", "latent_image", "seed", "steps", "cfg", "sampler_name", "scheduler",
                       "denoise"}
    assert prompt[str(decode["id"])]["inputs"]["vae"] == [str(vae["id"]), 0]
    assert not {"Reroute", "PrimitiveNode", "MarkdownNote"} & {n["class_type"] for n in prompt.values()}


def test_checks_catch_shifted_widgets_and_unknown_files(object_info, our_nodes):
    wf = runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_DEV_4096))
    _node(wf, "KSampler")["widgets_values"].remove("fixed")  # an old file without the control slot
    errors = uicheck.check_workflow(wf, object_info, registry.VIRTUAL_NODES)
    assert any("KSampler: 6 widgets_values, schema has 7" in e for e in errors), errors
    wf = runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_DEV_4096))
    _node(wf, "UNETLoader")["widgets_values"][0] = "flux1-dev-missing.safetensors"
    result = runner.validate(ui_to_api(wf, object_info))
    assert not result.ok
    assert any(e["type"] == "value_not_in_list" for err in result.node_errors.values() for e in err["errors"])


def test_ui_check_accepts_outputs_a_newer_host_appends_but_not_changed_ones(object_info, our_nodes):
    wf = runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_DEV_4096))
    _node(wf, "SaveImage")["outputs"] = []  # as saved by a 0.3.75-era frontend, whatever the host appends since
    assert uicheck.check_workflow(wf, object_info, registry.VIRTUAL_NODES) == []
    _node(wf, "VAEDecodeTiled")["outputs"][0]["type"] = "LATENT"
    errors = uicheck.check_workflow(wf, object_info, registry.VIRTUAL_NODES)
    assert any("VAEDecodeTiled: outputs ['LATENT'] differ" in e for e in errors), errors
