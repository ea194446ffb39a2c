"""The cascades on the models no host here has, on their stand-ins (I-Max and HRDiT on 2.1 at the end). Qwen-Image 2.1
(tests/qwen_image21_standin.py): HiFlow's family rule (nodes/cascade/families.py: an image family of the pack, flow
matching, a VAE latent) takes it; its prefix cache runs in the base pass (the trained size) and in the official stage
model's passes (one table for a whole pass), and is off in DyPE stages (a table per step). Nunchaku FLUX
(tests/nunchaku_flux_standin.py) is taken too: its cascades are tests/test_nunchaku_flux_cascades.py."""

from __future__ import annotations

import hiflow_cascade_reference as cref
import imax_cascade_reference as iref
import nunchaku_flux_standin
import pytest
import qwen_image21_standin
import tiny_models
import torch
from patching import _pack, dype
from test_hiflow_host import _settings
from test_qwen_image21_host import with_cache_log

pytestmark = pytest.mark.usefixtures("comfy_host")


def qwen21_vae():
    """A tiny encoding VAE of Qwen-Image 2.1's latent: 64 channels, 16x (ComfyUI's AutoencoderKL, 5 levels)."""
    import comfy.sd
    from comfy.ldm.models.autoencoder import AutoencoderKL
    from headless.tiny_pack import _randomize

    params = {"embed_dim": 64, "ddconfig": {
        "double_z": True, "z_channels": 64, "resolution": 256, "in_channels": 3, "out_ch": 3, "ch": 32,
        "ch_mult": [1, 1, 2, 2, 2], "num_res_blocks": 1, "attn_resolutions": [], "dropout": 0.0}}
    vae = comfy.sd.VAE(sd=_randomize(AutoencoderKL(**params), 0), config={"params": params})
    vae.latent_channels, vae.downscale_ratio, vae.upscale_ratio = 64, 16, 16
    return vae


def test_hiflows_family_rule_takes_qwen_image21_and_nunchaku_flux():
    def rule(model):
        return _pack("nodes.cascade.families").cascade_family(model, "HiFlow Cascade")

    assert rule(qwen_image21_standin.build(0)).name == "qwen_image21"
    assert rule(nunchaku_flux_standin.build(0)[0]).name == "nunchaku_flux"


@pytest.mark.parametrize("stages", ["official", "dype"])
def test_qwen_image21_cascade_keeps_the_cache_exact(stages):
    """Base pass at the trained size and the official stage model (theta x 10 and one temperature: the same table
    at every step of a pass): the cache is filled once per pass and read. DyPE in the stages: off there."""
    hiflow = _pack("nodes.cascade")
    model, log = with_cache_log(qwen_image21_standin.build(0))
    stage, stage_log = with_cache_log(dype(model, base_px=2 * 16)) if stages == "dype" else (None, None)
    out = hiflow.run_cascade(model, tiny_models.qwen_cond(7, 1), tiny_models.qwen_cond(5, 2), qwen21_vae(),
                             {"samples": torch.zeros(1, 64, 2, 2)}, 3, _settings(cref.Case(
                                 stage_steps=(4, 2), guidance=(0.0, 0.0))), stage_model=stage)
    assert out.latent["samples"].shape == (1, 64, 8, 8) and torch.isfinite(out.latent["samples"]).all()
    if stages == "dype":
        assert log[:6] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]  # the base pass, 6 steps
        assert stage_log and all(entry is None for entry in stage_log)
    else:  # every pass cached (the stages' swin shift alternates two grids: two slots)
        assert all(entry is not None for entry in log) and log[5] == (1, 5)


def _imax(**extra):
    from test_imax_host import _settings as imax_settings

    return imax_settings(iref.Case(stage_steps=(4,), guidance=(0.0,)), **extra)


def _hrdit(**extra):
    c = cref.Case(stage_steps=(4, 2), guidance=(0.0, 0.0))
    return _pack("nodes.cascade").HrditSettings(
        steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
        alphas=c.alphas, betas=c.betas, filter_ratio=c.ratios, sharpen=c.sharpen, swin=c.swin, spa_steps=(1, 0),
        **extra)


@pytest.mark.parametrize("cascade", ["imax", "hrdit"])
def test_imax_and_hrdit_on_qwen_image21_keep_the_cache_exact_and_refuse_flux1s_parts(cascade):
    """I-Max without text duplication and HRDiT without SPA and HAP (both FLUX.1's) run on 2.1: their official stage
    tables are one per pass, so the cache is filled once per pass and read, as in HiFlow's official stages; text
    duplication, SPA or HAP on 2.1 are refused by name."""
    run = _pack("nodes.cascade").run_cascade
    model, log = with_cache_log(qwen_image21_standin.build(0))
    if cascade == "imax":
        refused, (kept, pattern) = _imax(), (_imax(text_duplication=False), "text duplication is written for FLUX.1")
    else:
        refused, (kept, pattern) = _hrdit(spa=True, hap=False), (_hrdit(spa=False, hap=False),
                                                                  "SPA and HAP replace FLUX.1's attention")
    args = (tiny_models.qwen_cond(7, 1), tiny_models.qwen_cond(5, 2), qwen21_vae(), {"samples": torch.zeros(1, 64, 2, 2)},
            3)
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match=pattern):
        run(model, *args, refused)
    log.clear()
    out = run(model, *args, kept)
    assert torch.isfinite(out.latent["samples"]).all() and out.latent["samples"].shape[-2:] == (8, 8)
    assert log and all(entry is not None for entry in log)  # the cache ran in every call
    assert log[5] == (1, 5)  # the base pass: filled once, read at its 5 later steps
    assert sum(hits > 0 for _, hits in log) > len(log) // 2  # the stages read it too (a grid's first call fills)
