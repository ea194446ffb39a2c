"""Values no widget would let through, given from Python (tests/bad_value_cases.py, the table of issue 34): each node
refuses every row with one error naming the node, the input, the value and the rule (nodes/inputs/ranges.py and
cascade.py, one definition per input), before anything runs. The HiFlow rows, the seeds, the VAE and the latent:
test_bad_values_hiflow.py; every row through ComfyUI's own prompt validation and executor:
test_bad_values_prompt.py. Values on the rule pass; the engine's config refuses meaningless trained sizes too."""

from __future__ import annotations

import math

import pytest
import tiny_models
import torch
from bad_value_cases import CASES, DYPE, NODES, PREVIEW, SEGA, Bad, Wired

pytestmark = pytest.mark.usefixtures("comfy_host")

DYPE_VALUES = dict(method="yarn", dynamic=True, lambda_t=2.0, lambda_s=2.0, base_resolution=0,
                   yarn_thresholds="multiply")
SEGA_VALUES = dict(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=1.0,
                   base_resolution=0)
PREVIEW_VALUES = dict(family="flux", width=512, height=512, steps=2, shift=0.0, method="yarn", dynamic=True,
                      lambda_t=2.0, lambda_s=2.0, base_resolution=0, sega=False)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture(scope="module")
def model(comfy_host):
    return tiny_models.build_flux(0)


def names_the_value(message: str, value: object) -> bool:
    """The message shows the value as given, or each typed entry of it (rules that read the parsed list); a connected
    input's (``Wired``) what the row says it shows."""
    if isinstance(value, Wired):
        return value.shown in message
    if repr(value) in message:
        return True
    return isinstance(value, str) and bool(value) and all(p.strip() in message for p in value.split(","))


def check_message(case: Bad, message: str) -> None:
    """One message: the node, the input, the value and the rule."""
    assert message.startswith(f"{NODES[case.node]}: '{case.input}'"), message
    assert case.rule in message, message
    assert names_the_value(message, case.value), message


def test_the_table_covers_the_four_nodes_with_at_least_80_values():
    assert len(CASES) >= 80
    assert {case.node for case in CASES} == set(NODES)
    assert len({case.id for case in CASES}) == len(CASES)  # no row twice


def _run(node: str, model, case: Bad):
    if node == "dype":
        return _pack("nodes.dype_node").DyPEPatchModel.execute(model, **{**DYPE_VALUES, case.input: case.value})
    if node == "sega":
        return _pack("nodes.sega_node").SEGAAttention.execute(model, **{**SEGA_VALUES, case.input: case.value})
    return _pack("nodes.preview_node").DyPESchedulePreview.execute(**{**PREVIEW_VALUES, case.input: case.value})


@pytest.mark.parametrize("case", DYPE + SEGA + PREVIEW, ids=lambda case: case.id)
def test_each_bad_value_is_refused_from_python_by_name(model, case):
    with pytest.raises(ValueError) as raised:
        _run(case.node, model, case)
    check_message(case, str(raised.value))
    assert not model.object_patches and not model.model_options.get("transformer_options")  # the input untouched


@pytest.mark.parametrize("value", [0, 16, 1024, 1328, 16384, 1024.0])
def test_values_on_the_rule_pass(model, value):
    dype = _pack("nodes.dype_node").DyPEPatchModel.execute(model, **{**DYPE_VALUES, "base_resolution": value,
                                                                      "lambda_t": 8.0})
    patched = _pack("nodes.sega_node").SEGAAttention.execute(
        dype.result[0], **{**SEGA_VALUES, "base_resolution": value, "kappa": 1.0, "floor": 4.0, "beta": 0.0}).result[0]
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    assert config.positions_base_px == config.sega_base_px == float(value)


def test_the_widest_settings_still_sample_finite_values(model):
    """Nothing NaN leaves a node: at every range's far end a patched model samples finite latents (4x the trained
    size of the tests' tiny FLUX)."""
    ranges = _pack("nodes.inputs.ranges")
    dype = _pack("nodes.dype_node").DyPEPatchModel.execute(
        model, **{**DYPE_VALUES, "lambda_t": ranges.LAMBDA_T.high, "lambda_s": ranges.LAMBDA_S.high,
                  "method": "ntk", "base_resolution": 16}).result[0]
    sega = _pack("nodes.sega_node").SEGAAttention.execute(
        dype, kappa=ranges.KAPPA.high, alpha=ranges.ALPHA.high, beta=ranges.BETA.high, spread_min=0.0,
        spread_max=1.0, spread_alpha=ranges.SPREAD_ALPHA.high, floor=ranges.FLOOR.high, base_resolution=16,
        recipe=ranges.RECIPE.options[-1]).result[0]
    out = tiny_models.sample(sega, "flux", tokens=(4, 4), steps=2)
    assert torch.isfinite(out).all()


def test_the_preview_at_its_largest_inputs_is_bounded_by_the_rule():
    """steps=100000 once ran out of memory at ~10.6 GiB; the rule stops it before anything is drawn, and the largest
    allowed values draw."""
    node = _pack("nodes.preview_node").DyPESchedulePreview
    ranges = _pack("nodes.inputs.ranges")
    with pytest.raises(ValueError, match="^DyPE Schedule Preview: 'steps' must be a whole number from 1 to 200"):
        node.execute(**{**PREVIEW_VALUES, "steps": 100000})
    image = node.execute(**{**PREVIEW_VALUES, "steps": ranges.PREVIEW_STEPS.high, "width": ranges.WIDTH.high,
                            "height": ranges.HEIGHT.low, "sega": True}).result[0]
    assert image.ndim == 4 and torch.isfinite(image).all()


@pytest.mark.parametrize("value", [-1, math.nan, -math.inf, "512"], ids=repr)
def test_the_config_refuses_meaningless_trained_sizes_from_python(model, value):
    """hiflow and scripts build the patch through clone.patch_model and the config, without a node."""
    clone, rope = _pack("nodes.rope_patch.clone"), _pack("rope")
    with pytest.raises(ValueError, match="^base_resolution must be 0 .* got"):
        clone.patch_model(model, lambda config: config.with_positions(rope.PositionSchedule(), value))
    assert not model.object_patches  # nothing happened to the input model
