"""SEGA "paper" on every family: its spectrum is that of the tokens right after the family's own patch embedding.

For each family the pack declares the layer and how the model feeds it (``FamilyAdapter.token_embedding``). This
checks the declaration against the model itself: in a real sampling call, the layer's actual output, averaged over
its channels, is the token map the pack computes from the latent (image tokens, in order). Then SEGA "paper" alone
runs on the family above its trained size: the spatial columns carry temperatures, every other column stays plain.
"""

from __future__ import annotations

import pytest
import tiny_models
import tiny_video
import torch
from capture import capture
from patching import ALL_FAMILIES, _pack, as_heads_first, base_px, host_family, pair_slices

pytestmark = pytest.mark.usefixtures("comfy_host")
GRID = (9, 12)  # odd rows: the pad-free packing must still line up


def _hook(outputs: list):
    """Record what the layer returns; cloned, because the models add to it in place further on."""
    return lambda module, args, out: outputs.append(out.detach().clone())


def _layer_output_means(outputs: list[torch.Tensor], layout: str) -> torch.Tensor:
    """Channel means of what the layer returned in one call, per sample, flattened in token order."""
    out = outputs[0].detach()
    if layout == "conv":
        return out.float().mean(dim=1).flatten(1)
    return out.float().mean(dim=-1).reshape(out.shape[0], -1)


def _check_family(model, adapter, x: torch.Tensor, sigma: torch.Tensor, outputs: list) -> None:
    token_maps = _pack("nodes.rope_patch.token_maps")
    ours = token_maps.embedded_token_map(model.model, adapter, x, sigma).flatten(1)
    theirs = _layer_output_means(outputs, adapter.token_embedding.layout)
    if theirs.shape[0] != ours.shape[0]:  # frames folded into the batch (Krea 2) or a batch-1 call
        theirs = theirs.reshape(ours.shape[0], -1)
    # the image tokens are the first or the last ones the layer embedded (references/captions may follow/precede)
    candidates = [theirs[:, :ours.shape[1]], theirs[:, -ours.shape[1]:]]
    assert any(c.shape == ours.shape and torch.allclose(c, ours, rtol=1e-5, atol=1e-6) for c in candidates), (
        f"{adapter.name}: {adapter.token_embedding} does not reproduce the layer's output")


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_declared_patch_embedding_is_the_models(family):
    import comfy.utils

    fam = host_family(family)
    adapter = _pack("nodes.families").find_adapter(family)
    assert adapter.token_embedding is not None, f"{family}: no patch embedding declared"
    model = fam.build(0)
    layer = comfy.utils.get_attr(model.model, adapter.token_embedding.attr)
    outputs: list[torch.Tensor] = []
    handle = layer.register_forward_hook(_hook(outputs))
    try:
        with capture(model, fam.embedder_attr) as (clone, calls):
            tiny_models.sample(clone, family, tokens=GRID, steps=1)
    finally:
        handle.remove()
    assert outputs, f"{family}: the model never called {adapter.token_embedding.attr}"
    _check_family(model, adapter.bound(model.model), calls[0].x, calls[0].sigma, outputs)


@pytest.mark.parametrize("family", list(tiny_video.FAMILIES))
def test_declared_patch_embedding_is_the_video_models(family):
    import comfy.utils

    fam = tiny_video.FAMILIES[family]
    adapter = _pack("nodes.families").find_adapter(fam.adapter)
    model = tiny_video.build(family)
    layer = comfy.utils.get_attr(model.model, adapter.token_embedding.attr)
    outputs: list[torch.Tensor] = []
    handle = layer.register_forward_hook(_hook(outputs))
    try:
        with capture(model, fam.embedder_attr) as (clone, calls):
            tiny_video.sample(clone, family, (4, 6), steps=1)
    finally:
        handle.remove()
    if fam.name == "wan21_i2v":  # the start image rides in concat channels: the pack's map leaves them at zero
        return
    _check_family(model, adapter, calls[0].x, calls[0].sigma, outputs)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_paper_alone_on_every_family_scales_the_spatial_columns_only(family):
    fam = host_family(family)
    spectral, patch = _pack("spectral"), _pack("nodes.rope_patch.clone")
    settings = spectral.SegaSettings(recipe="paper")
    model = patch.patch_model(fam.build(0), lambda config: config.with_sega(settings, base_px(family)))
    with capture(model, fam.embedder_attr) as (clone, calls):
        out = tiny_models.sample(clone, family, tokens=(8, 12), steps=2)
    assert torch.isfinite(out).all()
    stock = fam.build(0)
    with capture(stock, fam.embedder_attr) as (plain_clone, plain_calls):
        tiny_models.sample(plain_clone, family, tokens=(8, 12), steps=2)
    for call, plain_call in zip(calls, plain_calls, strict=True):
        for (_, pe), (_, plain_pe) in zip(call.tables, plain_call.tables, strict=True):
            got, want = as_heads_first(fam, pe), as_heads_first(fam, plain_pe)
            for column, pairs in enumerate(pair_slices(fam)):
                if column in fam.spatial:  # NTK positions and SEGA's temperatures on both spatial axes
                    assert not torch.equal(got[..., pairs, :, :], want[..., pairs, :, :])
                else:
                    assert torch.equal(got[..., pairs, :, :], want[..., pairs, :, :])
