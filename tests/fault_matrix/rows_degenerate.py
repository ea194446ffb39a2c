"""Fault matrix rows: degenerate latents (NaN, inf, constant) and huge grids straight into the embedder."""

from __future__ import annotations

import torch
from capture import capture
from patching import _pack, expected_table
from test_sega_host import table_scales

from .lab import (
    HW,
    Lab,
    dype,
    row,
    sample_with,
    sega,
)


@row("NaN / inf in the latent, SEGA on", "tables stay finite (SEGA falls back to m_ref); the model output is the "
     "model's own business")
def row_nonfinite_latent(lab: Lab) -> None:
    noise = torch.randn(1, 16, *HW, generator=torch.Generator().manual_seed(0))
    noise[0, 0, 0, 0] = float("nan")
    noise[0, 1, 1, 1] = float("inf")
    with capture(sega(dype(lab.model))) as (clone, calls):
        sample_with(clone, "flux", steps=1, noise=noise)
    assert all(torch.isfinite(pe).all() for c in calls for _, pe in c.tables)


@row("constant (all-zero) latent, SEGA on", "finite output; that step uses m_ref for every pair, one warning")
def row_constant_latent(lab: Lab) -> None:
    with capture(sega(dype(lab.model))) as (clone, calls):
        out = sample_with(clone, "flux", steps=1, noise=torch.zeros(1, 16, *HW))
    assert torch.isfinite(out).all()
    spectral = _pack("spectral")
    for scales in table_scales(calls[0].tables[0][1]):
        assert torch.equal(scales, torch.full_like(scales, spectral.reference_temperature(2.0, 0.08)))


@row("8192² target: grid-sized ids (512×512 tokens) straight into the embedder, DyPE + SEGA",
     "finite table of exactly the stock layout; float64 only for per-pair vectors")
def row_grid_8192(lab: Lab) -> None:
    _huge_grid(lab, 512, with_sega=True)


@row("16384² target: 1024×1024 tokens, DyPE", "finite; rows at both ends of the grid as rope/ prescribes")
def row_grid_16384(lab: Lab) -> None:
    _huge_grid(lab, 1024, with_sega=False)


def _huge_grid(lab: Lab, tokens: int, with_sega: bool) -> None:
    schedule, scopes, families = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.scopes"), _pack("nodes.families")
    patched = dype(lab.model, base_px=0)
    if with_sega:
        patched = sega(patched, base_px=0)
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    embedder = patched.get_model_object("diffusion_model.pe_embedder")
    if with_sega:
        x = torch.randn(1, 16, 2 * tokens, 2 * tokens, generator=torch.Generator().manual_seed(0))
    else:
        x = torch.zeros(1, 16, 1, 1).expand(1, 16, 2 * tokens, 2 * tokens)  # only its shape is read
    scope = schedule.build_call_scope(config, families.FLUX, embedder, x, torch.tensor([0.7]), base_model=patched.model)
    assert all(a.freqs.dtype == torch.float64 and a.freqs.shape[-1] == 28 for a in scope.axes)
    rows = torch.tensor([0, tokens - 1])  # the first and the last row of the grid, every column
    ids = torch.zeros(1, 2 * tokens, 3)
    ids[0, :, 1] = rows.repeat_interleave(tokens).float()
    ids[0, :, 2] = torch.arange(tokens).repeat(2).float()
    with scopes.CALL.holding(scope):
        pe = embedder(ids)
    assert pe.shape == (1, 1, 2 * tokens, 64, 2, 2) and pe.dtype == torch.float32 and torch.isfinite(pe).all()
    if not with_sega:
        assert torch.equal(pe, expected_table(ids, torch.tensor([0.7]), (tokens, tokens), 64.0))
