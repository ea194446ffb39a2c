"""HiFlow Cascade's bad values from Python (tests/bad_value_cases.py's HiFlow rows), its seeds, and what is
connected to it: every row refused with one message naming the node, the input, the value and the rule, before
anything is sampled; every seed the widget allows runs (the stage seeds wrap modulo 2**64); a VAE that does not fit
the model is named with it; nothing NaN leaves the node at the far ends of its ranges."""

from __future__ import annotations

import math

import hiflow_models
import pytest
import tiny_models
import torch
from bad_value_cases import HIFLOW
from test_bad_values import check_message
from wired_values import python_value

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens of the tiny FLUX
#: Small but valid: 4 base steps, stages of 2 and 1 (tests/test_hiflow_host.py runs the official defaults).
VALUES = dict(seed=0, steps=4, cfg=1.0, denoise=1.0, scales="2, 4", stage_steps="2, 1", stage_guidance="4.5, 6",
              alphas="1.0, 0.25", betas="0.5, 0.5", filter_ratio="0.2, 0.2", ntk_factor="10, 10",
              proportional_attention=True, swin=True, sharpen=1.0)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


def _node(parts, latent=None, vae=None, model=None, **values):
    flux, flux_vae, positive, negative = parts
    latent = {"samples": torch.zeros(1, 16, *LATENT)} if latent is None else latent
    node = _pack("nodes.hiflow_node").HiFlowCascade
    return node.execute(model or flux, positive, negative, vae or flux_vae, latent, **{**VALUES, **values})


@pytest.mark.parametrize("case", HIFLOW, ids=lambda case: case.id)
def test_each_bad_value_is_refused_from_python_by_name(parts, case, monkeypatch):
    import comfy.sample

    def never(*args, **kwargs):
        raise AssertionError("sampled before refusing a bad value")

    monkeypatch.setattr(comfy.sample, "sample_custom", never)
    with pytest.raises((TypeError, ValueError)) as raised:
        _node(parts, **{case.input: python_value(case.value)})
    check_message(case, str(raised.value))


def test_the_settings_are_the_one_place_of_the_rules():
    """A settings value that exists follows every rule: the text lists parse to tuples, one entry serves every
    stage, and the same value given as text or as a tuple is the same settings."""
    settings = _pack("nodes.cascade.settings")
    text = settings.HiFlowSettings(scales="2, 4", stage_steps="16", alphas=(1, 0.25), ntk_factor=10)
    assert text.scales == (2.0, 4.0) and text.stage_steps == (16, 16) and text.ntk_factor == (10.0, 10.0)
    assert text == settings.HiFlowSettings(stage_steps=(16, 16))
    assert settings.OFFICIAL["scales"] == "2, 4"


@pytest.mark.parametrize("seed", [0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 2**63])
def test_every_seed_the_widget_allows_runs(parts, seed):
    """The widget's maximum once crashed in stage 1 (torch takes seeds below 2**64; seed + 1 was not wrapped)."""
    hf = _pack("spectral.hiflow")
    out = _node(parts, seed=seed).result[0]["samples"]
    assert out.shape[-2:] == (16, 16) and torch.isfinite(out).all()
    assert hf.stage_seed(seed, 2) == (seed + 2) % 2**64
    assert hf.blur_width(0xFFFFFFFFFFFFFFFF, 1) == hf.blur_width(0, 0)  # stage 1 of the largest seed wraps to 0


def test_the_far_ends_of_every_range_give_finite_latents(parts):
    """Nothing NaN leaves the node: the largest and the smallest values each rule allows, on the tiny FLUX."""
    high = _node(parts, cfg=30.0, scales="1.5, 4", stage_guidance="100", alphas="1", betas="1", filter_ratio="1",
                 ntk_factor="1000", sharpen=4.0, seed=5).result
    low = _node(parts, steps=2, denoise=0.01, cfg=0.0, scales="1.5", stage_steps="1", stage_guidance="0",
                alphas="0", betas="0", filter_ratio="0.01", ntk_factor="0.01", sharpen=0.0, swin=False,
                proportional_attention=False).result
    for latent in (*high, *low):
        assert torch.isfinite(latent["samples"]).all()
    assert high[0]["samples"].shape[-2:] == (16, 16) and low[0]["samples"].shape[-2:] == (6, 6)


def test_a_vae_that_does_not_fit_the_model_is_named_with_it(parts):
    """The round trip compares rank and channels too: on 0.30 a FLUX-style VAE on Qwen-Image's 5-D latent once
    returned a 16-"frame" latent without a word."""
    from headless import tiny_pack

    qwen = tiny_models.build_qwen()
    four = hiflow_models.flux_vae(0, channels=4)
    cases = [(parts[0], four, torch.zeros(1, 16, *LATENT), "AutoencoderKL, 4 latent channels"),
             (parts[0], tiny_pack.build_vae("qwen_image"), torch.zeros(1, 16, *LATENT), "the 'model' (Flux"),
             (qwen, parts[1], torch.zeros(1, 16, 1, *LATENT), "the 'model' (QwenImage")]
    for model, vae, latent, named in cases:
        conditioning = tiny_models.qwen_cond(7, 1) if model is qwen else parts[2]
        with pytest.raises(ValueError, match="^HiFlow Cascade: 'vae' .* does not fit the 'model'") as raised:
            _pack("nodes.hiflow_node").HiFlowCascade.execute(model, conditioning, conditioning, vae,
                                                             {"samples": latent}, **{**VALUES, "stage_guidance": "0"})
        assert named in str(raised.value) and "Connect the model's own VAE" in str(raised.value)


@pytest.mark.parametrize(("connected", "message"), [
    (dict(latent=torch.zeros(1, 16, *LATENT)), "'latent' must be a LATENT"),
    (dict(latent={"samples": torch.zeros(16, *LATENT)}), "'latent' must be an image latent"),
    (dict(latent={"samples": torch.full((1, 16, *LATENT), math.nan)}), "'latent' holds NaN"),
    (dict(latent={"samples": torch.zeros(1, 16, 3, *LATENT)}), "'latent' holds 3 frames"),
    (dict(vae=object()), "'vae' must be a VAE"),
    (dict(model=object()), "'model' must be a ComfyUI MODEL"),
])
def test_what_is_connected_is_named(parts, connected, message):
    with pytest.raises((TypeError, ValueError), match=f"^HiFlow Cascade: {message}"):
        _node(parts, **connected)


def test_conditioning_that_is_not_one_is_named(parts):
    flux, vae, positive, _ = parts
    with pytest.raises(TypeError, match="^HiFlow Cascade: 'negative' must be a CONDITIONING"):
        _pack("nodes.hiflow_node").HiFlowCascade.execute(flux, positive, "a cat", vae,
                                                         {"samples": torch.zeros(1, 16, *LATENT)}, **VALUES)
