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
