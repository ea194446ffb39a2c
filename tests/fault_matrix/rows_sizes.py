"""Fault matrix rows: odd, tiny and extreme latent sizes; sigmas out of the usual range; batches and per-sample sigmas; area conditioning."""

from __future__ import annotations

import torch
from capture import capture
from patching import BASE_PX, _pack, expected_table
from test_sega_host import expected_scales, table_scales

from .lab import (
    HW,
    Lab,
    assert_tables_follow_the_schedule,
    dype,
    row,
    sample_with,
    sega,
)


@row("odd latent size 15×21 (not a multiple of the patch)", "finite; scale from the padded token grid 8×11")
def row_odd_size(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, hw=(15, 21))
    assert torch.isfinite(out).all() and out.shape[-2:] == (15, 21)
    assert_tables_follow_the_schedule(calls, grid=(8, 11))


@row("tiny latent 2×2 (one token)", "below the trained grid: bit-identical to the unpatched model")
def row_tiny_size(lab: Lab) -> None:
    assert torch.equal(lab.sample(dype(lab.model), hw=(2, 2)), lab.sample(lab.model, hw=(2, 2)))


@row("32:1 latent 4×128 (2×64 tokens)", "finite; rows below base keep plain RoPE, columns scale 16")
def row_extreme_aspect(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, hw=(4, 128), steps=1)
    assert torch.isfinite(out).all()
    assert_tables_follow_the_schedule(calls, grid=(2, 64))


@row("sigma > 1 (custom sigmas 1.5 → 0.5 → 0)", "t clamped to 1: the table at sigma 1.5 is the table at sigma 1")
def row_sigma_above_one(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = sample_with(clone, "flux", sigmas=torch.tensor([1.5, 0.5, 0.0]))
    assert torch.isfinite(out).all() and calls[0].sigma[0] == 1.5
    ids, pe = calls[0].tables[0]
    assert torch.equal(pe, expected_table(ids, torch.ones_like(calls[0].sigma), (8, 8), BASE_PX / 16))
    assert_tables_follow_the_schedule(calls)


@row("sigma 0 reaches the model (sigmas 1 → 0.5 → 0 → 0)", "original frequencies (t = 0), YaRN temperature only")
def row_sigma_zero(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        sample_with(clone, "flux", sigmas=torch.tensor([1.0, 0.0, 0.0]), cfg=1.0)
    zero = [c for c in calls if (c.sigma == 0).all()]
    assert zero
    rope = _pack("rope")
    ids, pe = zero[0].tables[0]
    m = rope.yarn_temperature(2.0)
    stock = lab.embedder(ids)
    assert torch.allclose(pe[..., 8:, :, :], stock[..., 8:, :, :] * m, rtol=1e-6, atol=1e-6)


@row("per-sample sigmas in one call (B = 2, sigma 1.0 and 0.3)", "each row gets its own sigma's table")
def row_per_sample_sigmas(lab: Lab) -> None:
    schedule, scopes, families = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.scopes"), _pack("nodes.families")
    patched = dype(lab.model)
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    embedder = patched.get_model_object("diffusion_model.pe_embedder")
    sigma = torch.tensor([1.0, 0.3])
    ids = torch.zeros(2, 64, 3)
    ids[..., 1] = torch.arange(8).repeat_interleave(8).float()
    ids[..., 2] = torch.arange(8).repeat(8).float()
    scope = schedule.build_call_scope(config, families.FLUX, embedder, torch.zeros(2, 16, *HW), sigma)
    with scopes.CALL.holding(scope):
        pe = embedder(ids)
    for b in range(2):
        assert torch.equal(pe[b:b + 1], expected_table(ids[b:b + 1], sigma[b:b + 1], (8, 8), BASE_PX / 16))
    assert not torch.equal(pe[0], pe[1])


def _batch_of_four(lab: Lab, recipe: str) -> list:
    noise = torch.randn(4, 16, 16, 24, generator=torch.Generator().manual_seed(3))
    noise = noise * torch.linspace(0.3, 2.0, 4)[:, None, None, None] * torch.linspace(0.5, 2.5, 24)
    with capture(sega(dype(lab.model), recipe=recipe)) as (clone, calls):
        sample_with(clone, "flux", hw=(16, 24), steps=1, noise=noise, batch=4)
    assert len(calls) == 2 and all(c.x.shape[0] == 4 for c in calls)  # 7 vs 5 text tokens: split
    return calls


@row("batch of 4 different latents, cond and uncond in split calls, DyPE + SEGA (recipe refined)",
     "every row's temperatures come from its own sample's spectrum; one spectrum per step")
def row_batch_of_four_split(lab: Lab) -> None:
    for call in _batch_of_four(lab, "refined (ours)"):
        got = table_scales(call.tables[0][1])
        want = expected_scales(call.x, call.sigma, (8, 12), method="yarn")
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w.float(), rtol=2e-6, atol=0)
            assert len({tuple(r.tolist()) for r in g}) == 4


@row("the same batch of 4 with SEGA's recipe paper (default) and diffusers port",
     "paper: one spectrum of the batch-averaged token map, the same temperatures for every row (the official "
     "code); port: one per sample, as the pack promises (the port's code averages the batch)")
def row_batch_of_four_reference_recipes(lab: Lab) -> None:
    for recipe, distinct in (("paper (official SEGA code)", 1), ("diffusers port", 4)):
        for call in _batch_of_four(lab, recipe):
            for scales in table_scales(call.tables[0][1]):
                assert len({tuple(r.tolist()) for r in scales}) == distinct, recipe


@row("area conditioning (ConditioningSetArea on a 8×8-token crop of a 8×12-token latent)",
     "the crop is sampled as a smaller image with its own positions, so its scale comes from the crop")
def row_area_conditioning(lab: Lab) -> None:
    area = lab.fam.cond(7, 1)
    area[0][1].update(area=(8, 8, 0, 8), strength=1.0, set_area_to_bounds=False)  # latent px: h, w, y, x
    full = lab.fam.cond(7, 3)
    with capture(dype(lab.model)) as (clone, calls):
        sample_with(clone, "flux", hw=(16, 24), steps=1, cfg=1.0, positive=full + area)
    grids = sorted({tuple(c.x.shape[-2:]) for c in calls})
    assert grids == [(8, 8), (16, 24)]
    for call in calls:
        grid = tuple(n // 2 for n in call.x.shape[-2:])
        assert_tables_follow_the_schedule([call], grid=grid)
