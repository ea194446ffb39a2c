"""HRDiT Cascade's bad values from Python (tests/bad_value_cases.py's HRDiT rows) and what is connected to it: every
row refused with one message naming the node, the input, the value and the rule, before anything is sampled; every
seed the widget allows runs; nothing NaN leaves the node at the far ends of its ranges."""

from __future__ import annotations

import hiflow_models
import pytest
import tiny_models
import torch
from bad_value_cases import HRDIT
from test_bad_values import check_message
from wired_values import python_value

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens of the tiny FLUX
#: Small but valid: 4 base steps, stages of 2 and 1 (tests/test_hrdit_cascade.py runs the official rule).
VALUES = dict(seed=0, steps=4, cfg=1.0, denoise=1.0, spa=True, hap=True, scales="2, 4", stage_steps="2, 1",
              spa_steps="2, 0", group_num=80, global_anchor=32, stage_guidance="4.5, 6", alphas="1.0, 0.25",
              betas="0.5, 0.5", filter_ratio="0.2, 0.2", ntk_factor="4, 10", proportional_attention=True, swin=False,
              sharpen=1.0, schedule="official HiFlow (FLUX.1-dev dynamic shift)")


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _node(parts, latent=None, vae=None, **values):
    flux, flux_vae, positive, negative = parts
    latent = {"samples": torch.zeros(1, 16, *LATENT)} if latent is None else latent
    return _pack("nodes.hrdit_node").HrditCascade.execute(flux, positive, negative, vae or flux_vae, latent, **{**VALUES, **values})


@pytest.mark.parametrize("case", HRDIT, ids=lambda case: case.id)
def test_each_bad_value_is_refused_from_python_by_name(parts, case, monkeypatch):
    import comfy.sample

    def never(*args, **kwargs):
        raise AssertionError("sampled before refusing a bad value")

    monkeypatch.setattr(comfy.sample, "sample_custom", never)
    with pytest.raises((TypeError, ValueError)) as raised:
        _node(parts, **{case.input: python_value(case.value)})
    check_message(case, str(raised.value))


def test_the_settings_are_the_one_place_of_the_rules():
    settings = _pack("nodes.cascade.hrdit_settings")
    text = settings.HrditSettings(stage_steps="17, 10", spa_steps="3", ntk_factor=4)
    assert text.spa_steps == (3, 3) and text.ntk_factor == (4.0, 4.0) and text.stage_steps == (17, 10)
    assert settings.HrditSettings() == settings.HrditSettings(stage_steps="17, 10", ntk_factor="4, 10",
                                                              spa_steps="3, 0")
    assert settings.OFFICIAL == {"stage_steps": "17, 10", "ntk_factor": "4, 10", "spa_steps": "3, 0"}
    official = settings.HrditSettings()
    assert (official.spa, official.hap, official.swin, official.group_num, official.global_anchor) == \
        (True, True, False, 80, 32)
    assert official.spa_on(0) and not official.spa_on(1)


@pytest.mark.parametrize("seed", [0xFFFFFFFFFFFFFFFF, 2**63])
def test_every_seed_the_widget_allows_runs(parts, seed):
    out = _node(parts, seed=seed).result[0]["samples"]
    assert out.shape[-2:] == (16, 16) and torch.isfinite(out).all()


def test_the_far_ends_of_every_range_give_finite_latents(parts):
    high = _node(parts, cfg=30.0, group_num=1024, global_anchor=4096, spa_steps="2, 1", swin=True, seed=5).result
    low = _node(parts, steps=2, denoise=0.01, cfg=0.0, scales="1.5", stage_steps="1", spa_steps="0", group_num=2,
                global_anchor=0, stage_guidance="0", alphas="0", betas="0", filter_ratio="0.05", ntk_factor="0.01",
                proportional_attention=False).result
    two = _node(parts, group_num=2, spa_steps="2, 1").result
    for latent in (*high, *low, *two):
        assert torch.isfinite(latent["samples"]).all()
    assert high[0]["samples"].shape[-2:] == (16, 16) and low[0]["samples"].shape[-2:] == (6, 6)


@pytest.mark.parametrize(("connected", "message"), [
    (dict(latent=torch.zeros(1, 16, *LATENT)), "'latent' must be a LATENT"),
    (dict(latent={"samples": torch.zeros(1, 16, 3, *LATENT)}), "'latent' holds 3 frames"),
])
def test_what_is_connected_is_named(parts, connected, message):
    with pytest.raises((TypeError, ValueError), match=f"^HRDiT Cascade: {message}"):
        _node(parts, **connected)
