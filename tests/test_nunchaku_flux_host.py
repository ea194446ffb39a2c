"""Nunchaku FLUX on its stand-in (tests/nunchaku_flux_standin.py, written from ComfyUI-nunchaku's and nunchaku's code;
its CUDA kernels cannot run here): the pack's per-step tables reach nunchaku's transformer in its [sin, cos] layout,
float32 as its ``pack_rotemb`` asserts, through its packing, on a dense attention built from a tiny ComfyUI Flux's
layers, so the stand-in must sample exactly as that Flux with the same patch does, in float32 and in the bf16 /
fp16 nunchaku runs in (ids in the model's dtype); SEGA's per-image temperatures, which its one table per batch
cannot hold, are refused by name."""

from __future__ import annotations

import nunchaku_flux_standin as standin
import pytest
import tiny_models
import torch
from capture import capture
from patching import BASE_TOKENS, _pack, dype, expected_table

pytestmark = pytest.mark.usefixtures("comfy_host")

EMBEDDER = "diffusion_model.model.pos_embed"
GRID = (8, 12)
RECIPES = ["paper", "port", "refined"]
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def sega(model, recipe: str, base_px: float = BASE_TOKENS * 16):
    settings = _pack("spectral").SegaSettings(recipe=recipe)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_sega(settings, base_px))


def sample(model, grid=GRID, **kwargs):
    return tiny_models.sample(model, "flux", tokens=grid, **kwargs)


def nunchaku_layout(pe: torch.Tensor) -> torch.Tensor:
    """ComfyUI's (B, 1, N, pairs, 2, 2) -> nunchaku's (B, 1, N, pairs, 1, 2) [sin, cos]."""
    return torch.stack((pe[..., 1, 0], pe[..., 0, 0]), dim=-1).unsqueeze(-2)


def test_pack_and_unpack_are_inverse_and_keep_nunchakus_tiles():
    table = torch.randn(1, 100, 64, 1, 2)
    packed = standin.pack_rotemb(standin.pad_tensor(table, 256, 1))
    assert packed.shape == (1, 256, 128)
    assert torch.equal(standin.unpack_rotemb(packed)[:, :100], table)
    assert not torch.equal(packed.view(1, 256, 64, 1, 2)[:, :100], table)  # tiles reordered, not a plain view


def test_detected_as_nunchaku_flux_and_its_pos_embed_replaced():
    families = _pack("nodes.families")
    nunchaku, flux = standin.build(0)
    assert families.detect_family(nunchaku.model).name == "nunchaku_flux"
    assert families.detect_family(flux.model).name == "flux"  # ComfyUI's own Flux keeps its adapter
    patched = dype(nunchaku)
    assert type(patched.get_model_object(EMBEDDER)).__name__ == "NunchakuRopeEmbedder"
    assert type(nunchaku.get_model_object(EMBEDDER)).__name__ == "EmbedND"  # the input MODEL untouched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("recipe", [None, *RECIPES])
@pytest.mark.parametrize("base_px", [0, 8 * 16])  # Flux.1's 1024; the 8-token grid itself
def test_at_or_below_the_trained_size_bit_identical(recipe, base_px, dtype):
    """(c) The original pos_embed's table, so the same output as the unpatched stand-in."""
    nunchaku, _ = standin.build(0, DTYPES[dtype])
    patched = dype(nunchaku, base_px=base_px)
    if recipe is not None:
        patched = sega(patched, recipe, base_px)
    plain = sample(nunchaku, (8, 8), steps=2, cfg=2.0)
    assert torch.equal(sample(patched, (8, 8), steps=2, cfg=2.0), plain)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("schedule", [dict(method="yarn"), dict(method="ntk"), dict(method="pi", lambda_s=1.0)])
def test_pos_embed_returns_each_steps_table_in_nunchakus_layout(schedule, dtype):
    """(a) Every call's table, text and Kontext reference rows included: rope/'s for that call's sigma and ids (in
    the model's dtype, as the wrapper builds them), as one (1, 1, N, pairs, 1, 2) float32 [sin, cos] table for the
    batch (nunchaku's blocks assert its batch of 1, its pack_rotemb float32)."""
    nunchaku, _ = standin.build(0, DTYPES[dtype])
    refs = [torch.randn(1, 16, 10, 6, generator=torch.Generator().manual_seed(4))]
    positive = tiny_models.flux_cond(7, 1, reference_latents=refs)
    with capture(dype(nunchaku, **schedule), EMBEDDER) as (patched, calls):
        sample(patched, steps=3, cfg=2.0, positive=positive, negative=tiny_models.flux_cond(7, 2))
    assert len(calls) == 6 and len({c.sigma[0].item() for c in calls}) == 3  # cond (with the ref) and uncond apart
    assert sum(bool((call.tables[0][0][:, 0] == 1).any()) for call in calls) == 3  # the reference's index 1
    fam = tiny_models.FAMILIES["flux"]
    for call in calls:
        (ids, table), = call.tables
        assert ids.dtype == DTYPES[dtype] and ids.dim() == 2
        assert table.dtype == torch.float32 and table.shape == (1, 1, ids.shape[0], 64, 1, 2)
        want = expected_table(ids[None], call.sigma[:1], GRID, BASE_TOKENS, fam, **schedule)
        assert torch.equal(table, nunchaku_layout(want))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("recipe", [None, *RECIPES])
@pytest.mark.parametrize("with_dype", [True, False])
def test_samples_exactly_as_comfyuis_flux_with_the_same_patch(recipe, with_dype, dtype):
    """The stand-in runs a tiny ComfyUI Flux's layers with the table it reads back from nunchaku's packed layout:
    DyPE, SEGA (every recipe) and both together give the same image as that Flux patched alike, bit for bit, in
    every dtype (the Flux's table is float32 too: ComfyUI's rope returns float32)."""
    if recipe is None and not with_dype:
        pytest.skip("nothing patched")
    nunchaku, flux = standin.build(0, DTYPES[dtype])

    def patched(model):
        model = dype(model) if with_dype else model
        return sega(model, recipe) if recipe else model

    ours = sample(patched(nunchaku), steps=3, cfg=2.0)
    assert torch.equal(ours, sample(patched(flux), steps=3, cfg=2.0))
    assert not torch.equal(ours, sample(nunchaku, steps=3, cfg=2.0))


def test_per_image_sega_temperatures_are_refused_by_name_and_what_works_instead():
    """One table per batch cannot hold two images' temperatures: refused, naming the model and the ways out; DyPE
    alone and SEGA alone with "paper" (one spectrum for the batch) run on a batch and match ComfyUI's Flux."""
    families = _pack("nodes.families")
    nunchaku, flux = standin.build(0)
    with pytest.raises(families.UnsupportedModelError) as error:
        sample(sega(dype(nunchaku), "refined"), batch=2, steps=1)
    message = str(error.value)
    assert "Nunchaku FLUX" in message and "batch size 1" in message and "'paper'" in message
    assert "DyPE Patch Model without SEGA" in message
    for patch in (dype, lambda m: sega(m, "paper")):
        assert torch.equal(sample(patch(nunchaku), batch=2, steps=2, cfg=2.0),
                           sample(patch(flux), batch=2, steps=2, cfg=2.0))


def test_nunchakus_v2_pos_embed_class_is_taken_too():
    """NunchakuFluxTransformer2DModelV2 keeps the same layout in ``embeddings.NunchakuFluxPosEmbed``."""
    nunchaku, flux = standin.build(0)
    v2 = type("NunchakuFluxPosEmbed", (standin.EmbedND,), {"__module__": "nunchaku.models.embeddings"})
    nunchaku.model.diffusion_model.model.pos_embed = v2(256, 10000, [16, 56, 56])
    assert torch.equal(sample(dype(nunchaku), steps=2), sample(dype(flux), steps=2))


def test_another_nodes_pos_embed_is_refused():
    class MyRope(torch.nn.Module):
        theta, axes_dim = 10000, [16, 56, 56]

    nunchaku, _ = standin.build(0)
    nunchaku.add_object_patch(EMBEDDER, MyRope())
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match=r"MyRope.*not nunchaku's EmbedND"):
        dype(nunchaku)
