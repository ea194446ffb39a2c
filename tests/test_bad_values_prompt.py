"""Every row of the bad-value table (tests/bad_value_cases.py) through ComfyUI's own ``validate_prompt`` and
executor, as an API client or a typed widget sends it: either ComfyUI's validation refuses it naming the input, or
the node does, with its one message, and nothing downstream runs. Rows ComfyUI converts to a valid value before any
node sees them (its INT and BOOLEAN conversions) are the table's ``prompt=False`` rows, checked from Python only."""

from __future__ import annotations

import pytest
from bad_value_cases import CASES, NODES, Bad, Wired
from headless import runner
from wired_values import prompt_nodes

pytestmark = pytest.mark.usefixtures("comfy_host")
THROUGH_PROMPT = [case for case in CASES if case.prompt]
OUR_NODE = "2"  # the node under test in every prompt below
_SCHEDULE = "official HiFlow (FLUX.1-dev dynamic shift)"  # nodes/inputs/cascade.py OFFICIAL_SHIFT


def _loaders(family: str = "flux") -> dict:
    return {
        "1": {"class_type": "DyPESEGATest_TinyModelLoader", "inputs": {"family": family, "seed": 0}},
        "3": {"class_type": "DyPESEGATest_TinyCLIPLoader", "inputs": {"family": family, "seed": 0}},
        "4": {"class_type": "CLIPTextEncode", "inputs": {"clip": ["3", 0], "text": "a red bicycle"}},
        "5": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 32, "height": 32, "batch_size": 1}},
    }


def _patch_prompt(node_id: str, inputs: dict) -> dict:
    """A tiny model through the patch node into a one-step KSampler: nothing samples unless the node accepts."""
    return {**_loaders(), OUR_NODE: {"class_type": node_id, "inputs": {"model": ["1", 0], **inputs}},
            "6": {"class_type": "KSampler", "inputs": {
                "model": [OUR_NODE, 0], "seed": 0, "steps": 1, "cfg": 1.0, "sampler_name": "euler",
                "scheduler": "simple", "positive": ["4", 0], "negative": ["4", 0], "latent_image": ["5", 0],
                "denoise": 1.0}},
            "7": {"class_type": "DyPESEGATest_TinyLatentStats", "inputs": {"samples": ["6", 0]}}}


def prompt_for(node: str) -> dict:
    if node == "dype":
        return _patch_prompt("DyPESEGA_PatchModel", dict(
            method="yarn", dynamic=True, lambda_t=2.0, lambda_s=2.0, base_resolution=0, yarn_thresholds="multiply"))
    if node == "sega":
        return _patch_prompt("DyPESEGA_SEGAAttention", dict(
            kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=1.0,
            base_resolution=0))
    if node == "preview":
        return {OUR_NODE: {"class_type": "DyPESEGA_SchedulePreview", "inputs": dict(
            family="flux", width=512, height=512, steps=2, shift=0.0, method="yarn", dynamic=True, lambda_t=2.0,
            lambda_s=2.0, base_resolution=0, sega=False)},
            "6": {"class_type": "PreviewImage", "inputs": {"images": [OUR_NODE, 0]}}}
    wired = dict(model=["1", 0], positive=["4", 0], negative=["4", 0], vae=["8", 0], latent=["5", 0], seed=0, steps=4,
                 cfg=1.0, denoise=1.0, proportional_attention=True, swin=True)
    if node == "hrdit":
        inputs = dict(wired, swin=False, scales="2, 4", stage_steps="2, 1", spa_steps="2, 0", group_num=80,
                      global_anchor=32, spa=True, hap=True, stage_guidance="4.5, 6", alphas="1.0, 0.25",
                      betas="0.5, 0.5", filter_ratio="0.2, 0.2", ntk_factor="4, 10", sharpen=1.0,
                      schedule=_SCHEDULE)
    elif node == "imax":
        inputs = dict(wired, scales="4", stage_steps="3", stage_guidance="7", base_shift=3.0, stage_shift="6",
                      ntk_factor="10", text_duplication=True, guidance_schedule="cosine_decay", wavelet_level=1)
    else:
        inputs = dict(wired, scales="2, 4", stage_steps="2, 1", stage_guidance="4.5, 6", alphas="1.0, 0.25",
                      betas="0.5, 0.5", filter_ratio="0.2, 0.2", ntk_factor="10, 10", sharpen=1.0)
    node_id = {"imax": "DyPESEGA_ImaxCascade", "hrdit": "DyPESEGA_HrditCascade"}.get(node, "DyPESEGA_HiFlowCascade")
    return {**_loaders(), "8": {"class_type": "DyPESEGATest_TinyEncodingVAELoader",
                                "inputs": {"family": "flux", "seed": 0}},
            OUR_NODE: {"class_type": node_id, "inputs": inputs},
            "7": {"class_type": "DyPESEGATest_TinyLatentStats", "inputs": {"samples": [OUR_NODE, 0]}}}


def refusal(case: Bad, tmp_path) -> str:
    """Who refused the row: "validation" (ComfyUI's checks or the node's validate_inputs) or "node" (execute)."""
    prompt, value = prompt_for(case.node), case.value
    if isinstance(value, Wired):  # a connected input: the nodes that make it, and the link to them
        nodes, value = prompt_nodes(value)
        prompt.update(nodes)
    prompt[OUR_NODE]["inputs"][case.input] = value
    checked = runner.validate(prompt)
    if not checked.ok:
        errors = [e for node in checked.node_errors.values() for e in node["errors"]]
        assert any(case.input in f"{e.get('details', '')} {e.get('extra_info', {}).get('input_name', '')}"
                   for e in errors), errors
        return "validation"
    result = runner.execute(prompt, tmp_path)
    assert not result.success, f"{case.id} ran"
    error = result.error()
    assert f"{NODES[case.node]}: '{case.input}'" in error, error
    assert "Traceback" not in error.splitlines()[0]
    assert not result.stats  # nothing downstream ran: no latent, NaN or not, left the node
    return "node"


def test_the_table_runs_most_rows_through_the_prompt():
    assert len(THROUGH_PROMPT) >= 80 and {case.node for case in THROUGH_PROMPT} == set(NODES)


@pytest.mark.parametrize("case", THROUGH_PROMPT, ids=lambda case: case.id)
def test_each_bad_value_is_refused_through_validate_prompt_and_the_executor(case, tmp_path):
    assert refusal(case, tmp_path) in ("validation", "node")


def test_the_prompt_path_itself_runs_a_good_value(tmp_path):
    """The premise: each prompt above runs when nothing is wrong (so a refusal is the bad value's)."""
    for node in NODES:
        result = runner.execute(prompt_for(node), tmp_path / node)
        assert result.success, result.error()
