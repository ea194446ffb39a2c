"""One HRDiT stage on ComfyUI's tiny Flux: the pack's stage model (the official stage embedder, theta x NTK and
proportional attention, with SPA on its leading steps and HAP on every step) against the official processor in
float64 (tests/hrdit_stage_reference.py), each side counting its own steps."""

from __future__ import annotations

import hrdit_stage_reference as sref
import pytest
import tiny_models
import torch
from patching import _pack

pytestmark = pytest.mark.usefixtures("comfy_host")
TEXT, GRID = 7, (16, 16)  # 4 HAP blocks of 64 image tokens


def _pack_stage(model, ntk: float, spa_steps: int, group_num: int, alpha: float, anchor: int, hap: bool = True):
    spa = _pack("nodes.rope_patch.spa")
    adapter = _pack("nodes.families").detect_family(model.model)
    official = _pack("nodes.cascade.hiflow_model").official_stage_model(model, adapter, ntk, True)
    scope = _pack("nodes.hap.scope_plan").ScopePlan(((alpha,) * 2,) * 2, ((0.0,) * 2,) * 2)
    kernel = _pack("nodes.hap.kernel").hap_kernel(scope, anchor) if hap else None
    plan = spa.AttentionPlan(spa=spa.SpaSettings(group_num), spa_steps=(0, spa_steps), kernel=kernel)
    return _pack("nodes.rope_patch.attention_clone").attention_clone(official, adapter, plan)


def _euler(model, steps: int = 3, seed: int = 0):
    """Euler on a tiny schedule (both sides count their steps: one model evaluation per step)."""
    import comfy.sample
    import comfy.samplers

    def sample(wrapped, x, sigmas, extra_args=None, callback=None, disable=None):
        for i in range(len(sigmas) - 1):
            denoised = wrapped(x, sigmas[i] * x.new_ones([x.shape[0]]), **extra_args)
            x = x + (sigmas[i + 1] - sigmas[i]) * (x - denoised) / sigmas[i]
        return x

    fam = tiny_models.FAMILIES["flux"]
    latent = fam.latent(1, *fam.latent_hw(*GRID))
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(seed))
    sigmas = torch.linspace(1.0, 0.0, steps + 1)[:-1].clamp(min=0.05).tolist() + [0.0]
    return comfy.sample.sample_custom(model, noise, 1.0, comfy.samplers.KSAMPLER(sample), torch.tensor(sigmas),
                                      tiny_models.flux_cond(TEXT, 1, guidance=4.5), tiny_models.flux_cond(5, 2),
                                      latent, disable_pbar=True, seed=seed)


@pytest.fixture(scope="module")
def model(comfy_host):
    return tiny_models.build_flux()


@pytest.fixture(scope="module")
def plain(model):
    """The official stage model without SPA and HAP."""
    adapter = _pack("nodes.families").detect_family(model.model)
    return _euler(_pack("nodes.cascade.hiflow_model").official_stage_model(model, adapter, 4.0, True))


@pytest.mark.parametrize("spa_steps,group_num,anchor,hap", [(2, 5, 2, True), (0, 80, 0, True), (2, 5, 0, False)],
                         ids=["spa+hap", "hap", "spa"])
def test_a_stage_matches_the_official_processor(model, plain, spa_steps, group_num, anchor, hap):
    """Within float32 noise (measured 2e-6); SPA alone moves this tiny stage by 3e-4, HAP by 0.16."""
    ours = _pack_stage(model, 4.0, spa_steps, group_num, 64.0, anchor, hap)
    reference = sref.reference_stage(model, TEXT, 4.0, spa_steps, group_num, 64.0, anchor, hap=hap)
    got, want = _euler(ours), _euler(reference)
    torch.testing.assert_close(got, want, rtol=2e-5, atol=2e-5)
    assert (got - plain).abs().max() > 1e-4  # SPA / HAP changed this stage, 5x over the tolerance


def test_the_reference_is_the_official_stage_without_spa_and_hap(model, plain):
    """The reference's own premise: with SPA and HAP off it is the official stage model (theta x NTK,
    proportional attention) that the HiFlow tests check."""
    reference = sref.reference_stage(model, TEXT, 4.0, 0, 80, 64.0, 0, hap=False)
    torch.testing.assert_close(plain, _euler(reference), rtol=2e-5, atol=2e-5)
