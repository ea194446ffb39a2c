"""The I-Max Cascade example graph (tests/headless/imax_workflows.py) on the real host: every node and widget against
the live registry and ComfyUI's own prompt validation, the official README's settings, the note's estimates (shipped
as workflow 35, where tests/test_workflows.py also runs it on tiny models to 4x the base latent)."""

from __future__ import annotations

import pytest
from headless import hiflow_workflows, imax_workflows, registry, runner, uicheck
from headless.convert import ui_to_api

GRAPHS = imax_workflows.build_imax()


@pytest.fixture(scope="module")
def object_info():
    return registry.boot().object_info()


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_matches_the_live_registry_and_validates(name, object_info):
    graph = GRAPHS[name]
    assert uicheck.check_workflow(graph, object_info, registry.VIRTUAL_NODES) == []
    prompt = ui_to_api(graph, object_info)
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    assert [prompt[i]["class_type"] for i in result.outputs] == ["SaveImage"]
    cascade = next(n for n in prompt.values() if n["class_type"] == imax_workflows.IMAX)["inputs"]
    official = {"steps": 30, "scales": "4", "stage_steps": "30", "stage_guidance": "7", "base_shift": 3.0,
                "stage_shift": "6", "ntk_factor": "10", "proportional_attention": True, "text_duplication": True,
                "swin": True, "guidance_schedule": "cosine_decay", "wavelet_level": 1}
    assert {k: cascade[k] for k in official} == official and "stage_model" not in cascade
    guidance = next(n for n in prompt.values() if n["class_type"] == "FluxGuidance")["inputs"]["guidance"]
    tokens = next(n for n in prompt.values() if n["class_type"] == "T5TokenizerOptions")["inputs"]
    assert guidance == 3.5 and tokens["min_length"] == 512  # guidance_scale1; the official T5 padding


def test_the_nodes_defaults_are_the_graphs():
    """The graph saves the node's own defaults (the official README's): the input definitions, in widget order."""
    import host

    rules = host.pack_submodule("nodes.inputs.cascade")
    settings = host.pack_submodule("nodes.cascade.imax_settings").ImaxSettings()
    widgets = imax_workflows.OFFICIAL
    assert widgets[2:5] == [rules.STEPS.default, rules.CFG.default, rules.DENOISE.default]
    assert widgets[5:8] == [rules.IMAX_SCALES.default, rules.IMAX_STAGE_STEPS.default,
                            rules.IMAX_STAGE_GUIDANCE.default]
    assert widgets[8:] == [settings.base_shift, "6", "10", True, True, True, settings.guidance_schedule,
                           settings.wavelet_level]


def test_the_notes_estimates_are_one_4096_pass_and_say_what_to_do_on_out_of_memory():
    from headless import notes

    one_pass = notes.NOTES["FLUX.1-dev 4096x4096 DyPE.json"]
    note = imax_workflows.NOTES[imax_workflows.FLUX_IMAX]
    for figure in (hiflow_workflows._VRAM24, hiflow_workflows._VRAM80):
        assert figure in one_pass and f"peak {figure} VRAM" in note
    assert "(estimates, not measurements)" in note and "**Out of memory?**" in note and "text_duplication" in note
    assert "1.24x the model FLOPs" in note  # BENCHMARKS.md's counted figure


def test_wires_run_left_to_right():
    for name, graph in GRAPHS.items():
        nodes = {n["id"]: n for n in graph["nodes"]}
        for _, source, _, target, _, _ in graph["links"]:
            a, b = nodes[source], nodes[target]
            same_column = a["pos"][0] == b["pos"][0] and b["pos"][1] > a["pos"][1]
            assert same_column or b["pos"][0] >= a["pos"][0] + a["size"][0], (name, a["type"], b["type"])
