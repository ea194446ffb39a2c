"""The HiFlow Cascade example graphs (tests/headless/hiflow_workflows.py) on the real host: every node and widget
against the live registry and ComfyUI's own prompt validation (shipped as workflows 26-28, where
tests/test_workflows.py also runs each on tiny models to 4x the base latent)."""

from __future__ import annotations

import pytest
from headless import hiflow_workflows, registry, runner, uicheck
from headless.convert import ui_to_api

GRAPHS = hiflow_workflows.build()


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
    cascade = next(n for n in prompt.values() if n["class_type"] == hiflow_workflows.HIFLOW)["inputs"]
    assert (cascade["scales"], cascade["stage_steps"], cascade["alphas"]) == ("2, 4", "16, 10", "1.0, 0.25")
    assert ("stage_model" in cascade) == ("DyPE" in name)
    assert cascade["schedule"] == "official HiFlow (FLUX.1-dev dynamic shift)"
    note = next(n for n in graph["nodes"] if n["type"] == "MarkdownNote")["widgets_values"][0]
    assert "estimate" in note and "24 GB" in note and "80 GB" in note and "flux1-dev.safetensors" in note


def test_the_notes_vram_figures_are_one_4096_pass_and_say_what_to_do_on_out_of_memory():
    """The peak is the 4096² stage's step, one model call at 4096² as in workflow 02: the same estimate as its note;
    27 and 28 say where they differ; every note says what to change when memory runs out."""
    from headless import notes

    one_pass = notes.NOTES["FLUX.1-dev 4096x4096 DyPE.json"]
    assert hiflow_workflows._VRAM24 in one_pass and hiflow_workflows._VRAM80 in one_pass
    for name in hiflow_workflows.NAMES:
        note = hiflow_workflows.NOTES[name]
        assert f"peak {hiflow_workflows._VRAM24} VRAM" in note and f"peak {hiflow_workflows._VRAM80} VRAM" in note
        assert "**Out of memory?**" in note and "**Where this differs, on purpose:**" in note
        assert "(estimates, not measurements)" in note


def test_wires_run_left_to_right():
    """Every link leaves its node's right edge for a node that starts further right or sits below it in the same
    column (issue 33: in 26 the cascade sat left of the nodes that feed it)."""
    for name, graph in GRAPHS.items():
        nodes = {n["id"]: n for n in graph["nodes"]}
        for _, source, _, target, _, _ in graph["links"]:
            a, b = nodes[source], nodes[target]
            same_column = a["pos"][0] == b["pos"][0] and b["pos"][1] > a["pos"][1]
            assert same_column or b["pos"][0] >= a["pos"][0] + a["size"][0], (name, a["type"], b["type"])
