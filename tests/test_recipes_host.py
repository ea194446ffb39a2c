"""The published SEGA recipe and our DyPE + SEGA composition, as shipped: graphs, the recipe's per-step RoPE
table on the real host, and SEGA workflows saved before the allocation/m_ref inputs existed."""

from __future__ import annotations

import copy

import pytest
import tiny_models
import torch
from capture import capture
from headless import make_workflows, registry, runner
from headless.convert import ui_to_api
from test_dype_host import BASE_PX, _pack
from test_sega_host import HW

pytestmark = pytest.mark.usefixtures("comfy_host")

RECIPE = runner.WORKFLOWS_DIR / make_workflows.FLUX_KREA_SEGA
COMPOSITION = runner.WORKFLOWS_DIR / make_workflows.FLUX_KREA_4096
SEGA_NODE = "DyPESEGA_SEGAAttention"
# The port's apply_dype(method="sega") defaults (smellslikeml/diffusers src/diffusers/hooks/dype.py) in the node's
# widget order: kappa, alpha, beta, spread_min, spread_max, spread_alpha, floor (min_mscale), base_resolution 0 =
# Flux's 1024 px, allocation by log period ("rank"), m_ref = s^kappa ("power").
PORT_WIDGETS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power"]
# SEGA Attention's widgets_values as saved before allocation/m_ref existed (floor then defaulted to 0).
OLD_WIDGETS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 0.0, 0]


_PORT_INPUTS = ("kappa", "alpha", "beta", "spread_min", "spread_max", "spread_alpha", "floor", "base_resolution",
                "allocation", "m_ref")


def _widgets_by_name(node: dict) -> dict:
    """The node's saved values of the port's inputs by name, located by socket name (later optional inputs, such
    as ``variant``, are left out)."""
    names = [s["name"] for s in node["inputs"] if s.get("widget")]
    values = dict(zip(names, node["widgets_values"], strict=True))
    return {name: values[name] for name in _PORT_INPUTS}


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
    assert list(_widgets_by_name(_nodes(wf, SEGA_NODE)[0]).values()) == PORT_WIDGETS
    assert _nodes(wf, "FluxGuidance")[0]["widgets_values"] == [4.5]
    seed, _, steps, cfg, sampler, scheduler, denoise = ksampler["widgets_values"]
    assert (steps, cfg, sampler, scheduler, denoise) == (28, 1.0, "euler", "simple", 1.0)
    assert _nodes(wf, "UNETLoader")[0]["widgets_values"][0] == "flux1-krea-dev_fp8_scaled.safetensors"  # official name
    assert "ModelSamplingFlux" not in {n["type"] for n in wf["nodes"]}  # mu 1.15, as the port's example pins


def test_composition_graph_is_dype_then_sega_and_says_so():
    wf = runner.load_workflow(COMPOSITION)
    (ksampler,) = _nodes(wf, "KSampler")
    assert _upstream_types(wf, ksampler, "model") == [SEGA_NODE, "DyPESEGA_PatchModel", "UNETLoader"]
    assert list(_widgets_by_name(_nodes(wf, SEGA_NODE)[0]).values()) == PORT_WIDGETS
    (note,) = [n["widgets_values"][0] for n in wf["nodes"] if n["type"] == "MarkdownNote"]
    assert "our composition" in note
    (recipe_note,) = [n["widgets_values"][0] for n in runner.load_workflow(RECIPE)["nodes"]
                      if n["type"] == "MarkdownNote"]
    assert "published SEGA recipe" in recipe_note


def _port_static_ntk(scale: float, dim: int = 56, theta: float = 10000.0) -> torch.Tensor:
    """The port's positions for method="sega": NTK base theta * s^(d/(d-2)), no time schedule."""
    return 1.0 / (theta * scale ** (dim / (dim - 2))) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def test_published_recipe_pe_is_static_ntk_with_the_ports_scales():
    """Every model call of the recipe graph's model path (SEGA Attention alone, its shipped widget values) uses
    the port's static NTK frequencies and the port's per-pair scales (log-period allocation, floor 1.0, s^0.08)
    on that step's latent."""
    rope, spectral = _pack("rope"), _pack("spectral")
    node = _pack("nodes.sega_node").SEGAAttention
    values = _widgets_by_name(_nodes(runner.load_workflow(RECIPE), SEGA_NODE)[0])
    assert values["base_resolution"] == 0
    values["base_resolution"] = BASE_PX  # the tiny model's "trained" size: 4 tokens per axis
    (model,) = node.execute(tiny_models.FAMILIES["flux"].build(0), **values).result
    port = spectral.SegaSettings(floor=1.0)  # the port's min_mscale
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=3, positive=tiny_models.flux_cond(7, 0, guidance=4.5))
    assert len(calls) == 3
    for call in calls:
        ids, pe = call.tables[0]
        spectrum = spectral.latent_spectrum(call.x, 2, port)
        for column, n, energy in ((1, 8, spectrum.axis_h), (2, 12, spectrum.axis_w)):
            scale = n / 4
            freqs = _port_static_ntk(scale)
            m = spectral.port_pair_scales(freqs, energy, spectrum.spread, scale**0.08, port, spectrum.valid)
            assert (m >= 1.0).all() and not torch.equal(m, torch.full_like(m, scale**0.08))
            want = rope.rotation_table(ids[..., column], freqs[None], m)
            start = 8 if column == 1 else 36
            torch.testing.assert_close(pe[:, 0, :, start:start + 28], want, rtol=2e-6, atol=2e-7)


@pytest.fixture(scope="module")
def object_info():
    return registry.boot().object_info()


def _saved_before_the_new_inputs(path) -> dict:
    """``path`` as the frontend saved it before allocation/m_ref: 8 SEGA widget values, no sockets for them."""
    wf = copy.deepcopy(runner.load_workflow(path))
    (sega,) = _nodes(wf, SEGA_NODE)
    sega["widgets_values"] = list(OLD_WIDGETS)
    sega["inputs"] = [s for s in sega["inputs"] if s["name"] not in ("allocation", "m_ref", "variant")]
    return wf


@pytest.mark.parametrize("path", [RECIPE, COMPOSITION], ids=lambda p: p.name)
def test_workflow_saved_before_allocation_and_m_ref_loads_and_runs(path, object_info, tmp_path):
    wf = _saved_before_the_new_inputs(path)
    prompt = ui_to_api(wf, object_info)
    (sega,) = [n["inputs"] for n in prompt.values() if n["class_type"] == SEGA_NODE]
    # every saved value in its own widget; the new widgets at their defaults (the frontend's behaviour)
    assert {k: v for k, v in sega.items() if k != "model"} == {
        "kappa": 0.08, "alpha": 0.15, "beta": 1.5, "spread_min": 0.0, "spread_max": 1.0, "spread_alpha": 1.5,
        "floor": 0.0, "base_resolution": 0, "allocation": "rank", "m_ref": "power", "variant": "auto"}
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    # an API prompt saved before the inputs existed has no keys for them at all: they are optional
    for key in ("allocation", "m_ref", "variant"):
        del sega[key]
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    tiny, _ = runner.make_tiny(prompt)
    run = runner.execute(tiny, tmp_path)
    assert run.success, run.error()
    assert run.stats[0]["finite"] and run.stats[0]["std"] > 0
