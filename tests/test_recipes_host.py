"""The published SEGA recipe and our DyPE + SEGA composition, as shipped: graphs, the recipe's per-step RoPE
table on the real host (the SEGA authors' code, recipe "paper"), and SEGA workflows saved before the
allocation/m_ref inputs and before the recipe input existed."""

from __future__ import annotations

import copy

import pytest
import tiny_models
import torch
from capture import capture
from headless import make_workflows, paper_workflows, registry, runner
from headless.convert import ui_to_api
from patching import BASE_PX, _pack
from test_sega_host import HW

pytestmark = pytest.mark.usefixtures("comfy_host")

RECIPE = runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_KREA_SEGA)
COMPOSITION = runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_KREA_4096)
QWEN_WIDE = runner.WORKFLOWS_DIR / make_workflows.shipped(paper_workflows.QWEN_WIDE)
SEGA_NODE = "DyPESEGA_SEGAAttention"
# The SEGA codes' defaults (the official code's FluxTransformer2DModel config and the port's apply_dype) in the
# node's widget order: kappa (base_mscale_coefficient), alpha, beta, spread_min, spread_max, spread_alpha, floor
# (min_mscale), base_resolution 0 = Flux's 1024 px, allocation by log period ("rank"), m_ref = s^kappa ("power"),
# recipe: the official code.
SHIPPED_WIDGETS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power", "paper (official SEGA code)", "auto"]
WIDGET_NAMES = ["kappa", "alpha", "beta", "spread_min", "spread_max", "spread_alpha", "floor", "base_resolution",
                "allocation", "m_ref", "recipe", "variant"]
# SEGA Attention's widgets_values as saved before allocation/m_ref existed (floor then defaulted to 0), and as saved
# before the recipe existed.
OLD_WIDGETS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 0.0, 0]
BEFORE_RECIPE_WIDGETS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power"]


def _widgets_by_name(node: dict) -> dict:
    """The node's saved widget values by input name, located by socket name (the frontend saves a socket for each
    widget input), in WIDGET_NAMES order."""
    names = [s["name"] for s in node["inputs"] if s.get("widget")]
    values = dict(zip(names, node["widgets_values"], strict=True))
    return {name: values[name] for name in WIDGET_NAMES if name in values}


def _nodes(wf: dict, node_type: str) -> list[dict]:
    return [n for n in wf["nodes"] if n["type"] == node_type]


def _upstream_types(wf: dict, node: dict, socket: str) -> list[str]:
    """Node types along the chain feeding ``socket`` of ``node`` (nearest first), following first inputs."""
    by_id = {n["id"]: n for n in wf["nodes"]}
    links = {lk[0]: lk for lk in wf["links"]}
    chain = []
    link = next(s["link"] for s in node["inputs"] if s["name"] == socket)
    while link is not None:
        source = by_id[links[link][1]]
        chain.append(source["type"])
        link = source["inputs"][0]["link"] if source.get("inputs") else None
    return chain


def test_published_recipe_graph_is_sega_alone_with_the_ports_defaults():
    wf = runner.load_workflow(RECIPE)
    (ksampler,) = _nodes(wf, "KSampler")
    assert _upstream_types(wf, ksampler, "model") == [SEGA_NODE, "UNETLoader"]  # no DyPE: static NTK positions
    assert _widgets_by_name(_nodes(wf, SEGA_NODE)[0]) == dict(zip(WIDGET_NAMES, SHIPPED_WIDGETS, strict=True))
    assert _nodes(wf, "FluxGuidance")[0]["widgets_values"] == [4.5]
    seed, _, steps, cfg, sampler, scheduler, denoise = ksampler["widgets_values"]
    assert (steps, cfg, sampler, scheduler, denoise) == (28, 1.0, "euler", "simple", 1.0)
    assert _nodes(wf, "UNETLoader")[0]["widgets_values"][0] == "flux1-krea-dev_fp8_scaled.safetensors"  # official name
    assert "ModelSamplingFlux" not in {n["type"] for n in wf["nodes"]}  # mu 1.15, as the port's example pins


def test_composition_graph_is_dype_then_sega_and_says_so():
    wf = runner.load_workflow(COMPOSITION)
    (ksampler,) = _nodes(wf, "KSampler")
    assert _upstream_types(wf, ksampler, "model") == [SEGA_NODE, "DyPESEGA_PatchModel", "UNETLoader"]
    assert _widgets_by_name(_nodes(wf, SEGA_NODE)[0]) == dict(zip(WIDGET_NAMES, SHIPPED_WIDGETS, strict=True))
    (note,) = [n["widgets_values"][0] for n in wf["nodes"] if n["type"] == "MarkdownNote"]
    assert "our composition" in note
    (recipe_note,) = [n["widgets_values"][0] for n in runner.load_workflow(RECIPE)["nodes"]
                      if n["type"] == "MarkdownNote"]
    # the note says which code the recipe is and which model each published number is for
    for words in ("published SEGA recipe", "paper (official SEGA code)", "FLUX.1-dev", "diffusers port"):
        assert words in recipe_note


def test_published_recipe_runs_the_official_sega_code():
    """Every model call of the recipe graph's model path (SEGA Attention alone, its shipped widget values) builds
    the table the SEGA authors' Flux code builds on that step's latent (tests/sega_references.py)."""
    import sega_references as ref
    from test_sega_recipes_host import embedded, pe_pairs

    node = _pack("nodes.sega_node").SEGAAttention
    values = _widgets_by_name(_nodes(runner.load_workflow(RECIPE), SEGA_NODE)[0])
    assert values["base_resolution"] == 0
    values["base_resolution"] = BASE_PX  # the tiny model's "trained" size: 4 tokens per axis
    flux = tiny_models.FAMILIES["flux"].build(0)
    (model,) = node.execute(flux, **values).result
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=3, positive=tiny_models.flux_cond(7, 0, guidance=4.5))
    assert len(calls) == 3
    for call in calls:
        ids, pe = call.tables[0]
        rules = ref.official_flux(embedded(flux, call.x), 8, 12, BASE_PX)
        assert rules[0].m is not None and (rules[0].m >= 1.0).all()
        torch.testing.assert_close(pe_pairs(pe)[0], ref.table(ids[0], rules), rtol=0, atol=4e-6)


def test_sega_alone_on_qwen_image_scales_from_the_sega_authors_size_as_its_note_says(tmp_path):
    """Workflow 33 as shipped (SEGA Attention alone, recipe paper, base_resolution 0): the engine takes the SEGA
    authors' 1024 px for Qwen-Image, not the family's 1664, so 6144×2048 is 6× wide and 2× tall, as its note says;
    its tiny run keeps that ratio (runner.trained_px) and runs."""
    wf = runner.load_workflow(QWEN_WIDE)
    values = _widgets_by_name(_nodes(wf, SEGA_NODE)[0])
    assert values["base_resolution"] == 0 and values["recipe"] == "paper (official SEGA code)"
    (model,) = _pack("nodes.sega_node").SEGAAttention.execute(tiny_models.FAMILIES["qwen_image"].build(0),
                                                              **values).result
    config = _pack("nodes.rope_patch.config").read_config(model.model_options["transformer_options"])
    adapter = _pack("nodes.families").find_adapter("qwen_image")
    width, height, _ = _nodes(wf, "EmptySD3LatentImage")[0]["widgets_values"]
    plans = _pack("nodes.rope_patch.axis_plan").plan_call(config, adapter, (height // 16, width // 16))
    assert [plan.scale for plan in plans] == [2.0, 6.0] and [plan.base_tokens for plan in plans] == [64, 64]
    note = _nodes(wf, "MarkdownNote")[0]["widgets_values"][0]
    assert "**1024 px** for Qwen-Image" in note and "6× wide and 2× tall" in note
    tiny, plan = runner.make_tiny(runner.to_api(wf), side=384)  # 384 px: whole tokens at 6:2
    ((tiny_width, tiny_height),), (base,) = plan.latent_px, plan.base_px.values()
    assert (tiny_width / base, tiny_height / base) == (6.0, 2.0)
    run = runner.execute(tiny, tmp_path)
    assert run.success, run.error()


def _saved_before(path, widgets: list, dropped: tuple[str, ...]) -> dict:
    """``path`` as the frontend saved it before the ``dropped`` inputs existed: ``widgets``, no sockets for them."""
    wf = copy.deepcopy(runner.load_workflow(path))
    (sega,) = _nodes(wf, SEGA_NODE)
    sega["widgets_values"] = list(widgets)
    sega["inputs"] = [s for s in sega["inputs"] if s["name"] not in dropped]
    return wf


@pytest.fixture(scope="module")
def object_info():
    return registry.boot().object_info()


SAVED_BEFORE = {  # what a saved SEGA node held before each input was added, and the inputs it lacked
    "allocation and m_ref": (OLD_WIDGETS, ("allocation", "m_ref", "recipe", "variant")),
    "recipe": (BEFORE_RECIPE_WIDGETS, ("recipe", "variant")),
    "variant": (SHIPPED_WIDGETS[:-1], ("variant",)),
}


@pytest.mark.parametrize("before", list(SAVED_BEFORE))
@pytest.mark.parametrize("path", [RECIPE, COMPOSITION], ids=lambda p: p.name)
def test_workflow_saved_before_new_inputs_loads_and_runs(path, before, object_info, tmp_path):
    widgets, dropped = SAVED_BEFORE[before]
    wf = _saved_before(path, widgets, dropped)
    prompt = ui_to_api(wf, object_info)
    (sega,) = [n["inputs"] for n in prompt.values() if n["class_type"] == SEGA_NODE]
    # every saved value in its own widget; the new widgets at their defaults (the frontend's behaviour)
    defaults = dict(zip(WIDGET_NAMES, SHIPPED_WIDGETS, strict=True))
    want = {**defaults, **dict(zip(WIDGET_NAMES, widgets, strict=False))}
    assert {k: v for k, v in sega.items() if k != "model"} == want
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    # an API prompt saved before the inputs existed has no keys for them at all: they are optional
    for key in dropped:
        del sega[key]
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    tiny, _ = runner.make_tiny(prompt)
    run = runner.execute(tiny, tmp_path)
    assert run.success, run.error()
    assert run.stats[0]["finite"] and run.stats[0]["std"] > 0
