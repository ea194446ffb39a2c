"""I-Max Cascade's bad values from Python (tests/bad_value_cases.py's I-Max rows) and what is connected to it: every
row refused with one message naming the node, the input, the value and the rule, before anything is sampled; every
seed the widget allows runs; nothing NaN leaves the node at the far ends of its ranges."""

from __future__ import annotations

import hiflow_models
import pytest
import tiny_models
import torch
from bad_value_cases import IMAX
from test_bad_values import check_message
from wired_values import python_value

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens of the tiny FLUX
#: Small but valid: 4 base steps, one stage of 3 (tests/test_imax_host.py runs the official rule).
VALUES = dict(seed=0, steps=4, cfg=1.0, denoise=1.0, scales="4", stage_steps="3", stage_guidance="7", base_shift=3.0,
              stage_shift="6", ntk_factor="10", proportional_attention=True, text_duplication=True, swin=True,
              guidance_schedule="cosine_decay", wavelet_level=1)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _node(parts, latent=None, vae=None, **values):
    flux, flux_vae, positive, negative = parts
    latent = {"samples": torch.zeros(1, 16, *LATENT)} if latent is None else latent
    return _pack("nodes.imax_node").ImaxCascade.execute(flux, positive, negative, vae or flux_vae, latent, **{**VALUES, **values})


@pytest.mark.parametrize("case", IMAX, ids=lambda case: case.id)
def test_each_bad_value_is_refused_from_python_by_name(parts, case, monkeypatch):
    import comfy.sample

    def never(*args, **kwargs):
        raise AssertionError("sampled before refusing a bad value")

    monkeypatch.setattr(comfy.sample, "sample_custom", never)
    with pytest.raises((TypeError, ValueError)) as raised:
        _node(parts, **{case.input: python_value(case.value)})
    check_message(case, str(raised.value))


def test_the_settings_are_the_one_place_of_the_rules():
    settings = _pack("nodes.cascade.imax_settings")
    text = settings.ImaxSettings(scales="2, 4", stage_steps="30", stage_shift=6, ntk_factor=(10, 10))
    assert text.scales == (2.0, 4.0) and text.stage_steps == (30, 30) and text.stage_shift == (6.0, 6.0)
    assert settings.ImaxSettings() == settings.ImaxSettings(scales="4", stage_steps="30", stage_guidance="7")
    assert settings.OFFICIAL == {"scales": "4", "stage_steps": "30", "stage_guidance": "7", "stage_shift": "6",
                                 "ntk_factor": "10"}


@pytest.mark.parametrize("seed", [0xFFFFFFFFFFFFFFFF, 2**63])
def test_every_seed_the_widget_allows_runs(parts, seed):
    out = _node(parts, seed=seed).result[0]["samples"]
    assert out.shape[-2:] == (16, 16) and torch.isfinite(out).all()


def test_the_far_ends_of_every_range_give_finite_latents(parts):
    high = _node(parts, cfg=30.0, scales="1.5, 4", stage_steps="3", stage_guidance="100", base_shift=100.0,
                 stage_shift="100", ntk_factor="1000", wavelet_level=10, seed=5).result
    low = _node(parts, steps=2, denoise=0.01, cfg=0.0, scales="1.5", stage_steps="1", stage_guidance="0",
                base_shift=0.0, stage_shift="0", ntk_factor="0.01", proportional_attention=False,
                text_duplication=False, swin=False, guidance_schedule="disable").result
    for latent in (*high, *low):
        assert torch.isfinite(latent["samples"]).all()
    assert high[0]["samples"].shape[-2:] == (16, 16) and low[0]["samples"].shape[-2:] == (6, 6)


@pytest.mark.parametrize(("connected", "message"), [
    (dict(latent=torch.zeros(1, 16, *LATENT)), "'latent' must be a LATENT"),
    (dict(latent={"samples": torch.zeros(1, 16, 3, *LATENT)}), "'latent' holds 3 frames"),
])
def test_what_is_connected_is_named(parts, connected, message):
    with pytest.raises((TypeError, ValueError), match=f"^I-Max Cascade: {message}"):
        _node(parts, **connected)
