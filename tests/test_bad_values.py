"""Values no widget would let through, given from Python or an API prompt: each node refuses them with the widget's
own rule (nodes/inputs/ranges.py), in one error naming the node, the input and its range; the engine's config refuses
the trained resolutions that mean nothing (negative, NaN) from Python too. Values on the rule pass."""

from __future__ import annotations

import math

import pytest
import tiny_models

pytestmark = pytest.mark.usefixtures("comfy_host")


def _pack(name: str):
    import host

    return host.pack_submodule(name)


DYPE = dict(method="yarn", dynamic=True, lambda_t=2.0, lambda_s=2.0, base_resolution=0, yarn_thresholds="multiply")
SEGA = dict(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=1.0,
            base_resolution=0)
PREVIEW = dict(family="flux", width=512, height=512, steps=2, shift=0.0, method="yarn", dynamic=True, lambda_t=2.0,
               lambda_s=2.0, base_resolution=0, sega=False)

BAD_BASE = [-1, math.nan, math.inf, 1, 3, 15, 1000, 16400, "1024", True]


@pytest.fixture(scope="module")
def model(comfy_host):
    return tiny_models.build_flux(0)


def _dype(model, **values):
    return _pack("nodes.dype_node").DyPEPatchModel.execute(model, **{**DYPE, **values})


def _sega(model, **values):
    return _pack("nodes.sega_node").SEGAAttention.execute(model, **{**SEGA, **values})


@pytest.mark.parametrize("value", BAD_BASE, ids=repr)
@pytest.mark.parametrize("node", ["dype", "sega"])
def test_base_resolution_off_the_widgets_rule_is_refused(model, node, value):
    call, name = (_dype, "DyPE Patch Model") if node == "dype" else (_sega, "SEGA Attention")
    with pytest.raises(ValueError) as raised:
        call(model, base_resolution=value)
    message = str(raised.value)
    assert message.startswith(f"{name}: base_resolution must be 0 (the family default) or a multiple of 16 from 16 "
                              "to 16384 px; got "), message


@pytest.mark.parametrize(("node", "name", "value", "rule"), [
    ("dype", "lambda_t", -0.5, "from 0 to 8"), ("dype", "lambda_t", 9.0, "from 0 to 8"),
    ("dype", "lambda_t", math.nan, "from 0 to 8"), ("dype", "lambda_s", 100.0, "from 0 to 8"),
    ("sega", "kappa", 1.5, "from 0 to 1"), ("sega", "kappa", -0.1, "from 0 to 1"),
    ("sega", "beta", 11.0, "from 0 to 10"), ("sega", "beta", math.inf, "from 0 to 10"),
    ("sega", "floor", 4.5, "from 0 to 4"), ("sega", "floor", -1.0, "from 0 to 4"),
    ("sega", "spread_alpha", 0.0, "from 0.1 to 8"), ("sega", "alpha", 0.9, "from 0 to"),
])
def test_numbers_outside_the_widgets_range_are_refused(model, node, name, value, rule):
    call, title = (_dype, "DyPE Patch Model") if node == "dype" else (_sega, "SEGA Attention")
    with pytest.raises(ValueError, match=rf"^{title}: {name} must be a number {rule}") as raised:
        call(model, **{name: value})
    assert repr(value) in str(raised.value)


def test_the_preview_node_follows_the_same_rules():
    node = _pack("nodes.preview_node").DyPESchedulePreview
    for values, part in ((dict(base_resolution=-1), "base_resolution must be 0"),
                         (dict(lambda_t=math.nan), "lambda_t must be a number from 0 to 8"),
                         (dict(floor=9.0), "floor must be a number from 0 to 4")):
        with pytest.raises(ValueError, match=f"^DyPE Schedule Preview: {part}"):
            node.execute(**{**PREVIEW, **values})


@pytest.mark.parametrize("value", [0, 16, 1024, 1328, 16384, 1024.0])
def test_values_on_the_rule_pass(model, value):
    patched = _sega(_dype(model, base_resolution=value, lambda_t=8.0).result[0], base_resolution=value, kappa=1.0,
                    floor=4.0, beta=0.0).result[0]
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    assert config.positions_base_px == config.sega_base_px == float(value)


@pytest.mark.parametrize("value", [-1, math.nan, -math.inf, "512"], ids=repr)
def test_the_config_refuses_meaningless_trained_sizes_from_python(model, value):
    """hiflow and scripts build the patch through clone.patch_model and the config, without a node."""
    clone, rope = _pack("nodes.rope_patch.clone"), _pack("rope")
    with pytest.raises(ValueError, match="^base_resolution must be 0 .* got"):
        clone.patch_model(model, lambda config: config.with_positions(rope.PositionSchedule(), value))
    assert not model.object_patches  # nothing happened to the input model
