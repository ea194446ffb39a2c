"""SEGA Attention on the real host: per-step, per-sample scales from the live latent; composition with DyPE.

These tests pin the "refined" recipe (the latent-grid spectrum, per sample), the pack's SEGA before recipes
existed; the reference recipes "paper" and "port" are checked against the two codes in test_sega_recipes_host.py.
Tests about every recipe say so in their parameters."""

from __future__ import annotations

import logging

import pytest
import tiny_models
import torch
from capture import capture
from patching import (
    ALL_FAMILIES,
    BASE_PX,
    BASE_TOKENS,
    FAMILIES,
    _pack,
    as_heads_first,
    base_px,
    dype,
    expected_table,
    host_family,
    pair_slices,
)

pytestmark = pytest.mark.usefixtures("comfy_host")
HW = (16, 24)  # 8 x 12 tokens, scales 2 and 3 over a 4-token base


def sega(model, base_px: int = BASE_PX, **settings):
    spectral = _pack("spectral")
    patch = _pack("nodes.rope_patch.clone")
    settings.setdefault("recipe", "refined")
    values = spectral.SegaSettings(**settings)
    return patch.patch_model(model, lambda config: config.with_sega(values, base_px))


def expected_scales(x: torch.Tensor, sigma: torch.Tensor, grid, settings=None, **schedule):
    """Per-axis (B, pairs) SEGA temperatures computed with spectral/ and rope/ on this latent."""
    rope, spectral = _pack("rope"), _pack("spectral")
    settings = settings or spectral.SegaSettings()
    sched = rope.PositionSchedule(**schedule)
    spectrum = spectral.latent_spectrum(x, 2, settings)
    out = []
    for n, key in zip(grid, ("h", "w"), strict=True):
        scale = n / (BASE_PX / 16)
        freqs = rope.axis_frequencies(sched, 56, 10000.0, scale, BASE_PX / 16, sigma.to(torch.float64))
        out.append(spectral.axis_temperatures(freqs, getattr(spectrum, f"band_{key}"), getattr(spectrum, f"axis_{key}"),
                                              spectrum.spread, scale, settings, spectrum.valid))
    return out


def table_scales(pe: torch.Tensor, text_row: int = 0) -> list[torch.Tensor]:
    """Read m back from a table: a text token at position 0 has cos = 1, so its cos entry *is* float32(m)."""
    cos = pe[:, 0, text_row, :, 0, 0]
    return [cos[:, 8:36], cos[:, 36:64]]


@pytest.mark.parametrize("order", ["dype_then_sega", "sega_then_dype"])
def test_scales_follow_the_latent_each_step_and_compose_with_dype(order):
    model = tiny_models.FAMILIES["flux"].build(0)
    patched = sega(dype(model)) if order == "dype_then_sega" else dype(sega(model))
    with capture(patched) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=3, cfg=2.0, negative=tiny_models.flux_cond(7, 2))
    assert len(calls) == 3
    previous = None
    for call in calls:
        ids, pe = call.tables[0]
        got = table_scales(pe)
        want = expected_scales(call.x, call.sigma, (8, 12), method="yarn")
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w.to(torch.float32), rtol=2e-6, atol=0)
            assert torch.equal(g[0], g[1])  # cond and uncond share the latent, hence the scales
        if previous is not None:
            assert not torch.equal(got[0], previous)  # the latent changed, so did the scales
        previous = got[0]


def test_composition_order_does_not_matter():
    model = tiny_models.FAMILIES["qwen_image"].build(0)
    a = sega(dype(model, method="ntk"), kappa=0.1)
    b = dype(sega(model, kappa=0.1), method="ntk")
    config = _pack("nodes.rope_patch.config")
    assert config.read_config(a.model_options["transformer_options"]) == config.read_config(
        b.model_options["transformer_options"])
    out_a = tiny_models.sample(a, "qwen_image", HW, steps=2, cfg=2.0)
    out_b = tiny_models.sample(b, "qwen_image", HW, steps=2, cfg=2.0)
    assert torch.equal(out_a, out_b)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_sega_on_every_family_per_sample_on_the_spatial_axes_only(family):
    """SEGA alone (static NTK positions): per-sample temperatures from this family's latent (its patch size), on
    the spatial columns only; every other column is the family's plain RoPE."""
    fam = host_family(family)
    rope, spectral = _pack("rope"), _pack("spectral")
    grid = (8, 12)
    noise = torch.randn(2, *fam.latent(1, *fam.latent_hw(*grid)).shape[1:], generator=torch.Generator().manual_seed(5))
    noise[1] = noise[1] * torch.linspace(0.2, 3.0, noise.shape[-1])  # a differently coloured spectrum for sample 1
    with capture(sega(fam.build(0), base_px(family)), fam.embedder_attr) as (clone, calls):
        tiny_models.sample(clone, family, tokens=grid, steps=1, noise=noise, batch=2)
    call = calls[0]
    settings = spectral.SegaSettings()
    spectrum = spectral.latent_spectrum(call.x, fam.patch, settings)
    temperatures = []
    for column, n, key in zip(fam.spatial, grid, ("h", "w"), strict=True):
        scale = n / BASE_TOKENS
        freqs = rope.axis_frequencies(rope.PositionSchedule("ntk", dynamic=False), fam.axes_dim[column], fam.theta,
                                      scale, BASE_TOKENS, call.sigma.to(torch.float64))
        temperatures.append(spectral.axis_temperatures(
            freqs, getattr(spectrum, f"band_{key}"), getattr(spectrum, f"axis_{key}"), spectrum.spread, scale,
            settings, spectrum.valid))
    assert not torch.allclose(temperatures[1][0], temperatures[1][1])  # the two samples differ...
    for ids, pe in call.tables:
        want = expected_table(ids, call.sigma, grid, BASE_TOKENS, fam, temperatures, method="ntk", dynamic=False)
        got, want = as_heads_first(fam, pe), as_heads_first(fam, want)
        for column, pairs in enumerate(pair_slices(fam)):
            if column in fam.spatial:  # ...and so do their tables, on the spatial columns
                torch.testing.assert_close(got[..., pairs, :, :], want[..., pairs, :, :], rtol=2e-6, atol=2e-7)
            else:  # never touched
                assert torch.equal(got[..., pairs, :, :], want[..., pairs, :, :])


@pytest.mark.parametrize("family", FAMILIES)
def test_sega_alone_uses_static_ntk_positions(family):
    fam = tiny_models.FAMILIES[family]
    with capture(sega(fam.build(0))) as (clone, calls):
        tiny_models.sample(clone, family, HW, steps=2)
    rope = _pack("rope")
    for call in calls:
        ids, pe = call.tables[0]
        m = expected_scales(call.x, call.sigma, (8, 12), method="ntk", dynamic=False)
        for column, n, temperature in zip((1, 2), (8, 12), m, strict=True):
            freqs = rope.axis_frequencies(rope.PositionSchedule("ntk", dynamic=False), 56, 10000.0, n / 4, 4,
                                          call.sigma.to(torch.float64))
            want = rope.rotation_table(ids[..., column], freqs, temperature)
            start = 8 if column == 1 else 36
            torch.testing.assert_close(pe[:, 0, :, start:start + 28], want, rtol=2e-6, atol=2e-7)


def test_each_sample_gets_its_own_scales():
    model = sega(dype(tiny_models.FAMILIES["flux"].build(0)))
    noise = torch.randn(2, 16, *HW, generator=torch.Generator().manual_seed(5))
    noise[1] = noise[1] * torch.linspace(0.2, 3.0, HW[1])  # a differently coloured spectrum for sample 1
    first_scales = []
    for batch in (noise, noise[:1], noise[1:]):
        with capture(model) as (clone, calls):
            tiny_models.sample(clone, "flux", HW, steps=1, noise=batch, batch=batch.shape[0])
        first_scales.append(table_scales(calls[0].tables[0][1]))
    pair, single_a, single_b = first_scales
    for axis in range(2):
        assert not torch.allclose(pair[axis][0], pair[axis][1])
        torch.testing.assert_close(pair[axis][0], single_a[axis][0], rtol=2e-6, atol=0)
        torch.testing.assert_close(pair[axis][1], single_b[axis][0], rtol=2e-6, atol=0)


def test_scales_average_to_m_ref_without_floor_and_respect_the_floor():
    spectral = _pack("spectral")
    model = tiny_models.FAMILIES["flux"].build(0)
    with capture(sega(dype(model), alpha=0.5, floor=0.0)) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=2)
    for call in calls:
        for scales, n in zip(table_scales(call.tables[0][1]), (8, 12), strict=True):
            m_ref = spectral.reference_temperature(n / 4, 0.08)
            torch.testing.assert_close(scales.double().mean(-1), torch.full((1,), m_ref, dtype=torch.float64),
                                       rtol=1e-6, atol=0)
    with capture(sega(dype(model), alpha=0.5, floor=1.1)) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=2)
    assert all((s >= 1.1 - 1e-6).all() for call in calls for s in table_scales(call.tables[0][1]))


def test_spectrum_is_computed_once_per_step_with_split_conds(monkeypatch):
    spectrum = _pack("nodes.rope_patch.spectrum")
    counted = []
    real = spectrum.latent_spectrum

    def counting(*args, **kwargs):
        counted.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(spectrum, "latent_spectrum", counting)
    model = sega(dype(tiny_models.FAMILIES["flux"].build(0)))
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=3, cfg=2.0, negative=tiny_models.flux_cond(5, 2))
    assert len(calls) == 6  # cond and uncond in separate model calls (5 vs 7 text tokens)...
    assert len(counted) == 3 and all(shape[0] == 1 for shape in counted)  # ...but one spectrum per step


RECIPES = ["paper", "port", "refined"]


@pytest.mark.parametrize(("family", "with_dype", "recipe"), [
    (name, with_dype, recipe) for name in ALL_FAMILIES for with_dype in ((False, True) if name in FAMILIES else (True,))
    for recipe in (RECIPES if name in FAMILIES or not with_dype else ["paper"])])
def test_no_op_at_the_trained_resolution(family, with_dype, recipe):
    fam = host_family(family)
    model = fam.build(0)
    patched = sega(model, base_px=0, recipe=recipe)
    if with_dype:
        patched = dype(patched, base_px=0)
    plain = tiny_models.sample(model, family, tokens=(8, 8), steps=2, cfg=2.0)
    assert torch.equal(tiny_models.sample(patched, family, tokens=(8, 8), steps=2, cfg=2.0), plain)


def test_degenerate_latent_falls_back_to_m_ref_with_one_warning(caplog):
    spectral = _pack("spectral")
    model = sega(dype(tiny_models.FAMILIES["flux"].build(0)))
    zeros = torch.zeros(1, 16, *HW)  # a constant latent at the first step
    with caplog.at_level(logging.WARNING), capture(model) as (clone, calls):
        out = tiny_models.sample(clone, "flux", HW, steps=2, noise=zeros)
    assert torch.isfinite(out).all()
    first = table_scales(calls[0].tables[0][1])
    for scales, n in zip(first, (8, 12), strict=True):
        assert torch.equal(scales, torch.full_like(scales, spectral.reference_temperature(n / 4, 0.08)))
    assert len([r for r in caplog.records if "SEGA" in r.getMessage()]) == 1

    schedule = _pack("nodes.rope_patch.schedule")
    config = _pack("nodes.rope_patch.config").read_config(model.model_options["transformer_options"])
    adapter = _pack("nodes.families").FLUX
    embedder = model.get_model_object(adapter.embedder_attr)
    bad = torch.randn(1, 16, *HW)
    bad[0, 3, 2, 2] = float("nan")
    bad[0, 4, 1, 1] = float("inf")
    scope = schedule.build_call_scope(config, adapter, embedder, bad, torch.tensor([0.5]))
    for axis in scope.axes:
        assert torch.isfinite(axis.temperature).all()
        assert torch.equal(axis.temperature, torch.full_like(axis.temperature, axis.temperature[0, 0].item()))


@pytest.mark.parametrize("allocation", ["rank", "frequency"])
def test_options_reach_the_model_and_m_ref_yarn_keeps_dypes_temperature(allocation):
    """m_ref=yarn, floor 0 after DyPE: the per-pair scales average to YaRN's 0.1 ln s + 1 (DyPE's own)."""
    spectral = _pack("spectral")
    settings = spectral.SegaSettings(floor=0.0, m_ref="yarn", allocation=allocation)
    model = tiny_models.FAMILIES["flux"].build(0)
    with capture(sega(dype(model), floor=0.0, m_ref="yarn", allocation=allocation)) as (clone, calls):
        tiny_models.sample(clone, "flux", HW, steps=2)
    for call in calls:
        got = table_scales(call.tables[0][1])
        want = expected_scales(call.x, call.sigma, (8, 12), settings, method="yarn")
        for g, w, n in zip(got, want, (8, 12), strict=True):
            torch.testing.assert_close(g, w.to(torch.float32), rtol=2e-6, atol=0)
            yarn = 0.1 * torch.log(torch.tensor(n / 4, dtype=torch.float64)) + 1
            torch.testing.assert_close(g.double().mean(-1), yarn.expand(1), rtol=1e-6, atol=0)
