"""HiFlow Cascade and I-Max Cascade on Nunchaku FLUX, on its stand-in (tests/nunchaku_flux_standin.py: ComfyUI-nunchaku
@dbfd194's ComfyFluxWrapper and nunchaku @3a3cc3d's packed rotary layout on a dense attention built from a tiny
ComfyUI Flux's layers; never run on the real thing). The stand-in and that Flux share their weights, so a cascade
gives the same latents on both, bit for bit, only if the official schedule and the stage guidance are read from the
wrapper and the stage tables (HiFlow's NTK x factor, I-Max's NTK with its clip and text copies, both times the
proportional temperature; DyPE / SEGA stages) reach nunchaku's transformer in its [sin, cos] layout through the
adapter's one conversion (nodes/rope_patch/nunchaku_embedder.py). Every stage step's table is checked against the
formula; what one table per batch cannot hold is refused by name. The stand-in asserts a float32 table as nunchaku's
``pack_rotemb`` does, so the cascades also run in the bf16 and fp16 nunchaku computes in (ids in the model's dtype),
against ComfyUI's Flux in the same dtype."""

from __future__ import annotations

import math
from contextlib import contextmanager

import hiflow_cascade_reference as cref
import hiflow_models
import imax_cascade_reference as iref
import nunchaku_flux_standin as standin
import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, dype
from test_nunchaku_flux_host import nunchaku_layout

pytestmark = pytest.mark.usefixtures("comfy_host")
LATENT = (4, 4)  # 2 x 2 tokens: HiFlow's stages at 8 x 8 and 16 x 16 latent pixels, I-Max's at 16 x 16
EMBEDDER = "diffusion_model.model.pos_embed"
NODES = {"hiflow": "HiFlow Cascade", "imax": "I-Max Cascade"}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
_PARTS: dict = {}


def settings(cascade: str, **case):
    """The reference cases' settings (the official inputs; HiFlow's schedule 'official'), cfg 2."""
    cascades = _pack("nodes.cascade")
    if cascade == "hiflow":
        c = cref.Case(stage_steps=(4, 2), cfg=2.0, **case)
        return cascades.HiFlowSettings(
            steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
            alphas=c.alphas, betas=c.betas, filter_ratio=c.ratios, sharpen=c.sharpen, swin=c.swin)
    c = iref.Case(stage_steps=(4,), cfg=2.0, **case)
    return cascades.ImaxSettings(
        steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
        base_shift=c.base_shift, stage_shift=c.stage_shift, guidance_schedule=c.schedule, wavelet_level=c.level,
        swin=c.swin)


def parts_in(dtype: str):
    """(stand-in, ComfyUI's Flux, VAE, positive, negative) with both models in ``dtype``, once per module."""
    if dtype not in _PARTS:
        nunchaku, flux = standin.build(0, DTYPES[dtype])
        _PARTS[dtype] = (nunchaku, flux, hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1),
                         tiny_models.flux_cond(5, 2))
    return _PARTS[dtype]


@pytest.fixture(scope="module")
def parts(comfy_host):
    yield parts_in("float32")
    _PARTS.clear()


def run(parts, model, cascade_settings, stage=None, batch: int = 1):
    _, _, vae, pos, neg = parts
    return _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(batch, 16, *LATENT)}, 3,
                                              cascade_settings, stage_model=stage)


def stage_patch(model, patch: str):
    """The stage model a user connects to 'stage_model' (None: the official one)."""
    if patch == "official":
        return None
    model = dype(model, method="yarn") if "dype" in patch else model
    if "sega" in patch:
        recipe = _pack("spectral").SegaSettings(recipe="refined" if "dype" in patch else "paper")
        model = _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_sega(recipe, BASE_PX))
    return model


@contextmanager
def recording(class_name: str):
    """Every (ids, table) modules of ``class_name`` return, in call order (a global forward hook: the stage clones
    are built inside the cascade)."""
    calls: list = []

    def hook(module, inputs, output):
        if type(module).__name__ == class_name:
            calls.append((inputs[0].detach().clone(), output.detach().clone()))

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield calls
    finally:
        handle.remove()


def test_family_schedule_and_guidance_are_flux1_devs_read_from_the_wrapper(parts):
    nunchaku, flux = parts[:2]
    rule = _pack("nodes.cascade.families").cascade_family
    base, schedule = _pack("nodes.families.base"), _pack("nodes.cascade.schedule")
    adapter = rule(nunchaku, "HiFlow Cascade")
    assert adapter.name == "nunchaku_flux" and base.distilled_guidance(nunchaku.model)
    latent = torch.zeros(1, 16, 96, 64)  # off 1024²: the official mu follows the base size, not the model's shift
    assert torch.equal(schedule.base_schedule(nunchaku, adapter, 30, latent),
                       schedule.base_schedule(flux, rule(flux, "HiFlow Cascade"), 30, latent))
    schnell, _ = standin.build(0)  # a config without guidance (schnell's): no guidance, the model's own shift
    schnell.model.diffusion_model.config["guidance_embed"] = False
    assert not base.distilled_guidance(schnell.model) and not schedule.has_official_schedule(schnell, adapter)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("patch", ["official", "dype", "sega", "dype+sega"])
@pytest.mark.parametrize("cascade", ["hiflow", "imax"])
def test_cascade_gives_comfyuis_flux_latents_bit_for_bit(parts, cascade, patch, dtype):
    """Every pass's latent (base and stages) equal to the same cascade on ComfyUI's Flux with the same weights
    (tolerance 0: torch.equal), in each dtype; the input MODEL untouched."""
    parts = parts_in(dtype)
    nunchaku, flux = parts[:2]
    ours = run(parts, nunchaku, settings(cascade), stage_patch(nunchaku, patch))
    want = run(parts, flux, settings(cascade), stage_patch(flux, patch))
    assert len(ours.stages) == len(want.stages) == (3 if cascade == "hiflow" else 2)
    for got, expected in zip(ours.stages, want.stages, strict=True):
        assert torch.equal(got["samples"], expected["samples"])
    assert nunchaku.object_patches == {} and not nunchaku.model_options.get("transformer_options")


@pytest.mark.parametrize("cascade", ["hiflow", "imax"])
def test_the_stage_guidance_reaches_nunchakus_transformer(parts, cascade):
    nunchaku = parts[0]
    guidance = (4.5, 6.0) if cascade == "hiflow" else (7.0,)
    low = run(parts, nunchaku, settings(cascade, guidance=tuple(g - 3.0 for g in guidance)))
    high = run(parts, nunchaku, settings(cascade, guidance=guidance))
    assert torch.equal(low.stages[0]["samples"], high.stages[0]["samples"])  # the base pass: the conditioning's
    assert not torch.equal(low.latent["samples"], high.latent["samples"])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_hiflow_stage_steps_table_is_ntk_theta_times_the_temperature(parts, dtype):
    """Each stage call's pos_embed output: [sin, cos] of pos · (θ·10)^(-2k/d) (ComfyUI's EmbedND at θ·10), times
    m = (log N / log T)^(1/4), T = 64² + 512 (FLUX.1's 1024²), N the call's tokens; ComfyUI's Flux's table read
    out, call by call; float32 from ids in the model's dtype."""
    import comfy.ldm.flux.layers

    parts = parts_in(dtype)
    nunchaku, flux = parts[:2]
    with recording("NunchakuStageRope") as calls:
        run(parts, nunchaku, settings("hiflow"))
    with recording("HiFlowStageEmbedder") as flux_calls:
        run(parts, flux, settings("hiflow"))
    assert len(calls) == len(flux_calls) >= 4 + 2
    plain = comfy.ldm.flux.layers.EmbedND(256, 10000 * 10.0, [16, 56, 56])
    for (ids, table), (flux_ids, flux_table) in zip(calls, flux_calls, strict=True):
        assert ids.dim() == 2 and ids.dtype == DTYPES[dtype]
        assert table.shape == (1, 1, ids.shape[0], 64, 1, 2) and table.dtype == torch.float32
        m = (math.log(ids.shape[0]) / math.log(64 * 64 + 512)) ** 0.25
        torch.testing.assert_close(table, nunchaku_layout(plain(ids[None]) * m), rtol=1e-6, atol=0)
        assert torch.equal(ids, flux_ids[0]) and torch.equal(table, nunchaku_layout(flux_table))
    grids = sorted({int(ids[:, 1].max()) + 1 for ids, _ in calls})
    assert grids == [4, 5, 8, 9]  # both stages, swin-padded and not


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_imax_stage_steps_table_has_the_text_copies_and_the_clip(parts, dtype):
    """I-Max's stage model at a small trained grid (2 x 2 tokens, so the 8 x 8-token stage holds 4 x 4 prompt
    copies): every stage call's pos_embed output is the official stage transformer's table (tests/
    imax_cascade_reference.py's OfficialRope: NTK x 10 with its clip, the copies' text ids moved, the proportional
    temperature) in nunchaku's layout, float32, and the cascade equals ComfyUI's Flux's with the same stage model."""
    parts = parts_in(dtype)
    nunchaku, flux = parts[:2]
    rule, model = _pack("nodes.cascade.families").cascade_family, _pack("nodes.cascade.imax_model")

    def stage(m):
        return model.imax_stage_model(m, rule(m, "I-Max Cascade"), 10.0, True, True, (2.0, 2.0))

    with recording("NunchakuStageRope") as calls:
        ours = run(parts, nunchaku, settings("imax"), stage(nunchaku))
    want = run(parts, flux, settings("imax"), stage(flux))
    assert torch.equal(ours.latent["samples"], want.latent["samples"])
    assert len(calls) >= 4
    for ids, table in calls:
        grid = (int(ids[:, 1].max()) + 1, int(ids[:, 2].max()) + 1)
        copies = (grid[0] // 2, grid[1] // 2)
        text = ids.shape[0] - grid[0] * grid[1]
        assert text % (copies[0] * copies[1]) == 0 and text > 7  # the prompt, repeated once per copy
        official = iref.OfficialRope(parts[0].get_model_object(EMBEDDER), 10.0, 2, copies,
                                     text // (copies[0] * copies[1]), grid)
        assert ids.dtype == DTYPES[dtype] and table.dtype == torch.float32
        torch.testing.assert_close(table, nunchaku_layout(official(ids[None])), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cascade", ["hiflow", "imax"])
def test_per_image_sega_temperatures_in_a_stage_are_refused_by_name(parts, cascade):
    """nunchaku's kernels take one table for the batch: a stage model with SEGA after DyPE on a batch of two
    images is refused, naming Nunchaku FLUX and the ways out (the same stage runs on ComfyUI's Flux)."""
    nunchaku, flux = parts[:2]
    with pytest.raises(_pack("nodes.families").UnsupportedModelError) as error:
        run(parts, nunchaku, settings(cascade), stage_patch(nunchaku, "dype+sega"), batch=2)
    message = str(error.value)
    assert "Nunchaku FLUX" in message and "batch size 1" in message and "'paper'" in message
    assert run(parts, flux, settings(cascade), stage_patch(flux, "dype+sega"), batch=2).latent["samples"].shape[0] == 2


def test_another_nodes_pos_embed_is_refused_by_both_stage_models(parts):
    class MyRope(torch.nn.Module):
        theta, axes_dim = 10000, [16, 56, 56]

    families = _pack("nodes.families")
    replaced = parts[0].clone()
    replaced.add_object_patch(EMBEDDER, MyRope())
    adapter = _pack("nodes.cascade.families").cascade_family(replaced, "HiFlow Cascade")
    build = {"hiflow": lambda: _pack("nodes.cascade.hiflow_model").official_stage_model(replaced, adapter, 10.0, True),
             "imax": lambda: _pack("nodes.cascade.imax_model").imax_stage_model(replaced, adapter, 10.0, True, True)}
    for cascade, stage_model in build.items():
        with pytest.raises(families.UnsupportedModelError,
                           match=rf"{NODES[cascade]}: .*pos_embed: it is .*MyRope, not nunchaku's EmbedND.*"
                                 "'stage_model' instead"):
            stage_model()


def test_the_imax_stage_embedder_outside_the_clones_calls_is_nunchakus_own(parts):
    """A call that bypasses the clone's wrapper gets the plain table (ComfyUI's EmbedND's formula in nunchaku's
    layout), nunchaku's own bit for bit here, never a stale stage table."""
    nunchaku = parts[0]
    adapter = _pack("nodes.cascade.families").cascade_family(nunchaku, "I-Max Cascade")
    clone = _pack("nodes.cascade.imax_model").imax_stage_model(nunchaku, adapter, 10.0, True, True)
    embedder, original = clone.object_patches[EMBEDDER], nunchaku.get_model_object(EMBEDDER)
    ids = torch.zeros(11, 3)
    ids[7:, 1], ids[7:, 2] = torch.tensor([0.0, 0.0, 1.0, 1.0]), torch.tensor([0.0, 1.0, 0.0, 1.0])
    assert embedder is not original and torch.equal(embedder(ids), original(ids))


@pytest.mark.parametrize("dtype", DTYPES)
def test_hrdit_refuses_spa_and_hap_by_name_and_without_them_is_flux_bit_for_bit(parts, dtype):
    """SPA and HAP work through ComfyUI's attention override, which nunchaku's fused attention never calls: refused
    naming Nunchaku FLUX; with both off HRDiT's cascade (HiFlow's at HRDiT's settings) equals ComfyUI's Flux."""
    parts = parts_in(dtype)
    nunchaku, flux = parts[:2]
    c = cref.Case(stage_steps=(4, 2), cfg=2.0)

    def hrdit(spa: bool, hap: bool):
        return _pack("nodes.cascade").HrditSettings(
            steps=c.steps, cfg=c.cfg, scales=c.scales, stage_steps=c.stage_steps, stage_guidance=c.guidance,
            alphas=c.alphas, betas=c.betas, filter_ratio=c.ratios, sharpen=c.sharpen, swin=c.swin,
            spa_steps=(1, 0), spa=spa, hap=hap)

    for spa, hap in ((True, False), (False, True)):
        with pytest.raises(_pack("nodes.families").UnsupportedModelError,
                           match=r"^HRDiT Cascade: SPA and HAP .*Nunchaku FLUX runs its attention inside nunchaku's "
                                 r"fused kernels.*Turn 'spa' and 'hap' off"):
            run(parts, nunchaku, hrdit(spa, hap))
    ours, want = run(parts, nunchaku, hrdit(False, False)), run(parts, flux, hrdit(False, False))
    for got, expected in zip(ours.stages, want.stages, strict=True):
        assert torch.equal(got["samples"], expected["samples"])
