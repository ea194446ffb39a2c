"""What the frontend gets from the six nodes beyond their inputs (issues 26, 33): search aliases and advanced inputs
where the host's V3 API has them (detected from its classes, as the nodes do), a help page per node in the pack's
WEB_DIRECTORY, a tooltip on every input that says what it does, and a preview graph saved with an internal family
id that still validates and runs."""

from __future__ import annotations

import dataclasses
import inspect
import re

import host
import pytest

pytestmark = pytest.mark.usefixtures("comfy_host")

NODE_IDS = ("DyPESEGA_PatchModel", "DyPESEGA_SEGAAttention", "DyPESEGA_SchedulePreview", "DyPESEGA_HiFlowCascade",
            "DyPESEGA_ImaxCascade", "DyPESEGA_HrditCascade")
#: What a beginner does not need on a first run: folded away where the frontend can (the issue's list).
ADVANCED = {
    "DyPESEGA_PatchModel": {"lambda_t", "lambda_s", "yarn_thresholds"},
    "DyPESEGA_SEGAAttention": {"kappa", "alpha", "beta", "spread_min", "spread_max", "spread_alpha", "floor",
                               "allocation", "m_ref"},
    "DyPESEGA_SchedulePreview": {"shift", "lambda_t", "lambda_s", "base_resolution", "allocation", "m_ref", "floor"},
    # everything but model, conditioning, vae, latent, seed, steps, cfg, denoise and stage_model (issue 33), and
    # scales: its last stage is the image's final size (issue 41)
    "DyPESEGA_HiFlowCascade": {"stage_steps", "stage_guidance", "alphas", "betas", "filter_ratio",
                               "ntk_factor", "proportional_attention", "swin", "sharpen", "schedule"},
    "DyPESEGA_ImaxCascade": {"stage_steps", "stage_guidance", "base_shift", "stage_shift", "ntk_factor",
                             "proportional_attention", "text_duplication", "swin", "guidance_schedule",
                             "wavelet_level"},
    # as HiFlow's, but spa and hap shown (the method's two switches)
    "DyPESEGA_HrditCascade": {"stage_steps", "spa_steps", "group_num", "global_anchor", "stage_guidance",
                              "alphas", "betas", "filter_ratio", "ntk_factor", "proportional_attention", "swin",
                              "sharpen", "schedule"},
}
#: Words a user searching the node library types for this pack (issue 26), each node found by all of them.
SEARCH_WORDS = ("4K", "upscale", "high resolution", "extrapolation", "DyPE", "SEGA", "YaRN", "NTK")
HELP_DIR = host.PACK_DIR / "nodes" / "web" / "docs"


@pytest.fixture(scope="module")
def registry():
    import nodes

    host.load_pack_via_comfyui()
    return nodes


def _host_has(field: str) -> bool:
    from comfy_api.latest import io

    if field == "search_aliases":
        return field in {f.name for f in dataclasses.fields(io.Schema)}
    return field in inspect.signature(io.Input.__init__).parameters


def _inputs(node_cls) -> dict[str, dict]:
    info = node_cls.GET_NODE_INFO_V1()["input"]
    return {name: (spec[1] if len(spec) > 1 else {}) for group in ("required", "optional")
            for name, spec in info.get(group, {}).items()}


@pytest.mark.parametrize("node_id", NODE_IDS)
def test_search_aliases_where_the_host_has_them(registry, node_id):
    info = registry.NODE_CLASS_MAPPINGS[node_id].GET_NODE_INFO_V1()
    if not _host_has("search_aliases"):
        assert not info.get("search_aliases"), "this host's Schema has no search_aliases: none may be sent"
        return
    words = {w.lower() for w in info["search_aliases"]}
    assert {w.lower() for w in SEARCH_WORDS} <= words, f"missing: {[w for w in SEARCH_WORDS if w.lower() not in words]}"


@pytest.mark.parametrize("node_id", NODE_IDS)
def test_advanced_inputs_where_the_host_has_them(registry, node_id):
    flagged = {name for name, options in _inputs(registry.NODE_CLASS_MAPPINGS[node_id]).items()
               if options.get("advanced")}
    assert flagged == (ADVANCED[node_id] if _host_has("advanced") else set())


@pytest.mark.parametrize("node_id", NODE_IDS)
def test_every_tooltip_says_what_the_input_does(registry, node_id):
    for name, options in _inputs(registry.NODE_CLASS_MAPPINGS[node_id]).items():
        tooltip = options.get("tooltip", "")
        assert len(tooltip) >= 20, f"{node_id}.{name}: tooltip {tooltip!r}"
        assert not tooltip.startswith("As in"), f"{node_id}.{name} only points elsewhere: {tooltip!r}"


def test_the_help_pages_are_served_where_the_frontend_asks(registry):
    # The frontend's node help panel fetches /extensions/<pack>/docs/<node id>.md, <pack> the second part of the
    # node's python_module ("custom_nodes.<folder>"); ComfyUI serves EXTENSION_WEB_DIRS[<folder>] there.
    for node_id in NODE_IDS:
        module = registry.NODE_CLASS_MAPPINGS[node_id].RELATIVE_PYTHON_MODULE
        assert module == f"custom_nodes.{host.PACK_DIR.name}", module
    web = registry.EXTENSION_WEB_DIRS[host.PACK_DIR.name]
    assert host.PACK_DIR.joinpath("nodes", "web").samefile(web)
    # Every .js there loads into every user's frontend: only the ones we mean to ship (their behaviour is checked in
    # the browser, tests/test_browser_ui.py).
    scripts = sorted(p.relative_to(HELP_DIR.parent).as_posix() for p in HELP_DIR.parent.rglob("*.js"))
    assert scripts == ["fit_folded_inputs.js", "fit_rescaled_view.js"], scripts


@pytest.mark.parametrize("node_id", NODE_IDS)
def test_each_help_page_names_every_input_and_its_pictures_exist(registry, node_id):
    page = (HELP_DIR / f"{node_id}.md").read_text(encoding="utf-8")
    display = registry.NODE_DISPLAY_NAME_MAPPINGS[node_id]
    assert page.startswith(f"# {display}\n")
    missing = [name for name in _inputs(registry.NODE_CLASS_MAPPINGS[node_id]) if f"`{name}`" not in page]
    assert not missing, f"docs/{node_id}.md does not explain {missing}"
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page)
    assert pictures, "a help page shows a picture"
    for picture in pictures:  # relative: the frontend resolves it against the help page's own folder
        assert (HELP_DIR / picture).is_file(), picture


@pytest.mark.parametrize(("node_id", "module", "lists"), [("DyPESEGA_HiFlowCascade", "cascade", "HIFLOW_LISTS"),
                                                         ("DyPESEGA_ImaxCascade", "cascade", "IMAX_LISTS"),
                                                         ("DyPESEGA_HrditCascade", "hrdit", "HRDIT_LISTS")])
def test_the_cascades_list_inputs_say_their_form(registry, node_id, module, lists):
    """Each per-stage list's tooltip says one entry per stage and the separator (the rule's own words)."""
    rules = host.pack_submodule(f"nodes.inputs.{module}")
    inputs = _inputs(registry.NODE_CLASS_MAPPINGS[node_id])
    for rule in getattr(rules, lists):
        assert "one per stage, separated by ','" in inputs[rule.name]["tooltip"], rule.name
        assert rule.entry.bounds() in inputs[rule.name]["tooltip"], rule.name
        assert inputs[rule.name]["default"] == rule.default, rule.name


@pytest.mark.parametrize("drawing", ["hiflow_picture", "imax_picture", "hrdit_picture"])
def test_the_cascade_help_pictures_are_the_cascades_at_the_nodes_defaults(drawing):
    """Redrawn from the input definitions each must be the committed picture (pixel for pixel)."""
    import importlib
    import io

    from PIL import Image, ImageChops

    module = importlib.import_module(f"headless.{drawing}")
    committed = Image.open(module.PICTURE).convert("RGB")
    fresh = Image.open(io.BytesIO(module.picture_bytes())).convert("RGB")
    assert ImageChops.difference(committed, fresh).getbbox() is None, "stale: run tests/headless/make_workflows.py"


def _preview_prompt(family: str) -> dict:
    return {
        "1": {"class_type": "DyPESEGA_SchedulePreview",
              "inputs": {"family": family, "width": 2048, "height": 1024, "steps": 3, "shift": 0.0, "method": "yarn",
                         "dynamic": True, "lambda_t": 2.0, "lambda_s": 2.0, "base_resolution": 0, "sega": False}},
        "2": {"class_type": "PreviewImage", "inputs": {"images": ["1", 0]}},
    }


def test_a_preview_saved_with_the_family_id_validates_and_runs(tmp_path):
    # Graphs saved before the combo listed names hold the adapter id ("flux"); ComfyUI's own list check refused it.
    from headless import runner

    assert runner.validate(_preview_prompt("flux")).ok
    result = runner.execute(_preview_prompt("qwen_image"), tmp_path)
    assert result.success, result.error()


def test_an_unknown_preview_family_is_one_clear_error():
    from headless import runner

    result = runner.validate(_preview_prompt("sdxl"))
    assert not result.ok
    details = " ".join(e["details"] for node in result.node_errors.values() for e in node["errors"])
    assert "DyPE Schedule Preview: 'family' must be one of 'Flux.1" in details and "got 'sdxl'" in details


def test_card_pictures_are_served_ahead_of_a_json_only_template_route(tmp_path):
    # ComfyUI 0.38's template route answers only .json (app/custom_node_manager.py, added after custom nodes load);
    # the pack's route, added first, answers the pictures. The later route here stands for that rule only.
    import asyncio

    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    extension = host.pack_submodule("nodes.extension")
    (tmp_path / "01 card.jpg").write_bytes(b"\xff\xd8picture")
    (tmp_path / "01 card.json").write_text("{}")
    routes = web.RouteTableDef()
    extension.card_picture_route(routes, "the-pack", tmp_path)

    @routes.get("/workflow_templates/{module_name}/{filename}")
    async def json_only(request):
        if not request.match_info["filename"].endswith(".json"):
            raise web.HTTPNotFound()
        return web.FileResponse(tmp_path / request.match_info["filename"])

    async def fetch(*paths):
        app = web.Application()
        app.add_routes(routes)
        async with TestClient(TestServer(app)) as client:
            return [((r := await client.get(p)).status, await r.read()) for p in paths]

    got = asyncio.run(fetch("/workflow_templates/the-pack/01 card.jpg", "/workflow_templates/the-pack/01 card.json",
                            "/workflow_templates/the-pack/02 missing.jpg", "/workflow_templates/other/01 card.jpg",
                            "/workflow_templates/the-pack/..%2F01 card.jpg"))
    assert got[0] == (200, b"\xff\xd8picture")
    assert got[1] == (200, b"{}")
    assert [status for status, _ in got[2:]] == [404, 404, 404]

