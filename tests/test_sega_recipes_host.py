"""SEGA's reference recipes against the codes they reproduce, on the real host with real samplers.

"paper" against the SEGA authors' code (Flux and Qwen-Image files), "diffusers port" against the port
(tests/sega_references.py: float64 transcriptions written from reading them). Held-out cases: odd token counts,
non-square up to 1:4, a batch of two different latents, every sigma of a 6-step karras run (1 down to 0.01; the
real-size case: 3 steps over the same span). The trained size is a parameter of both codes
(``training_resolution``); the tiny models use 128 px (8 tokens per axis) so the grids stay small enough for the CPU,
plus one case at Flux's real 1024 px.

Tolerance: the codes compute the spectrum and allocation in float32, the pack partly in float32 (FFT, embedding)
and partly in float64; ``test_float32_gap_of_the_references`` measures the references' own float32/float64 gap on
these cases (worst per-pair temperature difference, printed) and the comparison allows a few times that.
"""

from __future__ import annotations

import pytest
import sega_references as ref
import tiny_models
import torch
from capture import capture
from patching import _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")

TRAIN_PX = 128  # the tiny models' trained size: 8 tokens per axis
# (rows, cols) tokens: odd square, odd non-square, 1:4, 4:1, larger non-square, and one at the real 1024 px base
CASES = [((9, 9), TRAIN_PX), ((17, 13), TRAIN_PX), ((12, 48), TRAIN_PX), ((40, 10), TRAIN_PX),
         ((33, 20), TRAIN_PX), ((66, 65), 1024)]
M_TOLERANCE = 2e-6  # relative, on the per-pair temperatures (the measured reference gap is below 2e-7)
TABLE_TOLERANCE = 4e-6  # absolute, on cos * m and sin * m (float32 tables: 1.2e-7 * m from rounding alone)


# Sampler steps per case: the tiny cases check every sigma of a 6-step karras run; the real-size case (4290 tokens,
# batch 2: most of this module's time in attention) the same span from 1 to 0.01 in 3 steps.
def steps_for(train_px: int) -> int:
    return 6 if train_px == TRAIN_PX else 3


LABELS = {"paper": "paper (official SEGA code)", "port": "diffusers port", "refined": "refined (ours)"}


def sega_node(model, recipe: str, base_px: int, **widgets):
    node = _pack("nodes.sega_node").SEGAAttention
    values = dict(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=1.0,
                  base_resolution=base_px, allocation="rank", m_ref="power", recipe=LABELS[recipe])
    values.update(widgets)
    return node.execute(model, **values).result[0]


def two_latents(family: str, grid: tuple[int, int], seed: int) -> torch.Tensor:
    """Two different noise latents (the second with a coloured spectrum along the columns)."""
    fam = tiny_models.FAMILIES[family]
    shape = fam.latent(2, *fam.latent_hw(*grid)).shape
    noise = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    noise[1] = noise[1] * torch.linspace(0.2, 3.0, shape[-1])
    return noise


def run(model, family: str, grid, noise, steps: int = 6, scheduler: str = "karras"):
    """Sample and return the model calls: karras spaces sigma from 1 down to 0.01 in 6 steps."""
    with capture(model) as (clone, calls):
        tiny_models.sample(clone, family, tokens=grid, steps=steps, noise=noise, batch=noise.shape[0],
                           scheduler=scheduler)
    assert len(calls) == steps
    return calls


def embedded(model, x: torch.Tensor) -> torch.Tensor:
    """The image tokens after the model's img_in, in float64: (B, rows * cols, D)."""
    layer = model.model.diffusion_model.img_in
    weight, bias = layer.weight.detach().double(), layer.bias.detach().double()
    return torch.stack([ref.packed_tokens(sample.reshape(-1, *sample.shape[-2:]).double()) @ weight.T + bias
                        for sample in x])


def pe_pairs(pe: torch.Tensor) -> torch.Tensor:
    """(B, 1, N, pairs, 2, 2) -> (B, N, pairs, 2) [cos * m, sin * m] as float64."""
    return torch.stack([pe[:, 0, ..., 0, 0], pe[:, 0, ..., 1, 0]], dim=-1).double()


def assert_rules(pe: torch.Tensor, ids: torch.Tensor, rules_per_row) -> float:
    """Every row's table equals the reference's; returns the worst per-pair temperature error (relative)."""
    got = pe_pairs(pe)
    worst = 0.0
    for row, rules in enumerate(rules_per_row):
        want = ref.table(ids[row], rules)
        torch.testing.assert_close(got[row], want, rtol=0, atol=TABLE_TOLERANCE)
        for axis, pairs in enumerate((slice(8, 36), slice(36, 64))):
            rule = rules[axis]
            if rule.m is None:
                continue
            text_cos = got[row, 0, pairs, 0]  # Flux/Qwen text ids: position 0 (Flux) or on the diagonal (Qwen)
            if ids[row, 0, axis + 1] == 0:
                worst = max(worst, float(((text_cos - rule.m) / rule.m).abs().max()))
    return worst


@pytest.mark.parametrize(("grid", "train_px"), CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple)
                         else str(v))
def test_paper_reproduces_the_official_flux_code(grid, train_px):
    model = tiny_models.FAMILIES["flux"].build(0)
    patched = sega_node(model, "paper", train_px)
    noise = two_latents("flux", grid, seed=sum(grid))
    calls = run(patched, "flux", grid, noise, steps=steps_for(train_px))
    sigmas = sorted(float(c.sigma[0]) for c in calls)
    assert sigmas[0] < 0.1 and sigmas[-1] == 1.0
    for call in calls:
        ids, pe = call.tables[0]
        rules = ref.official_flux(embedded(model, call.x), *grid, train_px)
        assert rules is not None
        assert rules[0].m is not None and not torch.equal(rules[0].m, rules[1].m)  # steered, per axis
        worst = assert_rules(pe, ids, [rules] * pe.shape[0])  # one spectrum for the batch: the same rules per row
        assert worst <= M_TOLERANCE


@pytest.mark.parametrize(("grid", "train_px"), CASES[:5], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple)
                         else str(v))
def test_paper_reproduces_the_official_qwen_image_code(grid, train_px):
    model = tiny_models.FAMILIES["qwen_image"].build(0)
    patched = sega_node(model, "paper", train_px)
    noise = two_latents("qwen_image", grid, seed=sum(grid))
    calls = run(patched, "qwen_image", grid, noise, steps=4)
    for call in calls:
        ids, pe = call.tables[0]
        rules = ref.official_qwen(embedded(model, call.x), *grid, train_px)
        assert rules is not None and torch.equal(rules[0].m, rules[1].m)  # the height axis takes the width's
        got = pe_pairs(pe)
        for row in range(pe.shape[0]):
            torch.testing.assert_close(got[row], ref.table(ids[row], rules), rtol=0, atol=TABLE_TOLERANCE)


@pytest.mark.parametrize(("grid", "train_px"), CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple)
                         else str(v))
def test_port_reproduces_the_diffusers_port_per_sample(grid, train_px):
    model = tiny_models.FAMILIES["flux"].build(0)
    patched = sega_node(model, "port", train_px)
    noise = two_latents("flux", grid, seed=3 * sum(grid))
    calls = run(patched, "flux", grid, noise, steps=steps_for(train_px))
    for call in calls:
        ids, pe = call.tables[0]
        rules = [ref.port_sample(ref.packed_tokens(sample.double()), *grid, train_px) for sample in call.x]
        assert not torch.equal(rules[0][1].m, rules[1][1].m)  # each sample its own spectrum
        worst = assert_rules(pe, ids, rules)
        assert worst <= M_TOLERANCE


def test_float32_gap_of_the_references():
    """The references' own float32/float64 gap on these cases: what the tolerances above must allow."""
    model = tiny_models.FAMILIES["flux"].build(0)
    gaps = []
    for (rows, cols), train_px in CASES:
        x = torch.randn(2, 16, 2 * rows, 2 * cols, generator=torch.Generator().manual_seed(rows * cols))
        tokens = embedded(model, x)
        for reference in (ref.official_flux,):
            exact = reference(tokens, rows, cols, train_px)
            single = reference(tokens.float(), rows, cols, train_px, dtype=torch.float32)
            for a, b in zip(exact, single, strict=True):
                gaps.append(float(((a.m - b.m) / a.m).abs().max()))
        for sample in x:
            packed = ref.packed_tokens(sample.double())
            exact = ref.port_sample(packed, rows, cols, train_px)
            single = ref.port_sample(packed.float(), rows, cols, train_px, dtype=torch.float32)
            for a, b in zip(exact, single, strict=True):
                gaps.append(float(((a.m - b.m) / a.m).abs().max()))
    print(f"worst float32/float64 gap of the references: {max(gaps):.2e} (tolerance {M_TOLERANCE:.0e})")
    assert max(gaps) * 5 <= M_TOLERANCE


@pytest.mark.parametrize("recipe", ["paper", "port"])
def test_dype_then_sega_keeps_dypes_positions_and_takes_the_recipes_temperatures(recipe):
    """After DyPE, SEGA supplies only temperatures: its recipe's spectrum and m_ref, allocated over DyPE's
    frequencies at this step; the positions are DyPE's (per axis)."""
    rope = _pack("rope")
    model = tiny_models.FAMILIES["flux"].build(0)
    grid = (17, 13)
    patched = sega_node(dype(model, TRAIN_PX), recipe, TRAIN_PX)
    calls = run(patched, "flux", grid, two_latents("flux", grid, seed=11), steps=3)
    knobs = ref.Knobs()
    for call in calls:
        ids, pe = call.tables[0]
        got = pe_pairs(pe)
        for row in range(pe.shape[0]):
            if recipe == "paper":
                token_map = embedded(model, call.x).mean(dim=(0, -1)).reshape(grid)
                m_scales = (max(grid) / 8,) * 2
            else:
                token_map = ref.packed_tokens(call.x[row].double()).mean(dim=-1).reshape(grid)
                m_scales = (grid[0] / 8, grid[1] / 8)
            profiles = ref.axis_profiles(token_map)
            spread = ref.dynamic_spread(ref.radial_profile(token_map), knobs)
            rules = []
            for axis, n in enumerate(grid):
                freqs = rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, n / 8, 8,
                                              call.sigma[row:row + 1].double())[0]
                m = ref.allocation(profiles[axis], freqs, m_scales[axis] ** 0.08, spread, knobs)
                rules.append(ref.AxisRule(freqs, m))
            torch.testing.assert_close(got[row], ref.table(ids[row], tuple(rules)), rtol=0, atol=TABLE_TOLERANCE)


def test_qwen_image_paper_takes_the_official_1024_base_refined_the_familys():
    """The official Qwen-Image code assumes 1024 px: "paper" rescales at Qwen-Image's 1328² template size (the
    family's trained size, 1664, is larger), the
    other recipes (the family's trained size) leave it stock."""
    plan_call = _pack("nodes.rope_patch.axis_plan").plan_call
    config = _pack("nodes.rope_patch.config").PatchConfig()
    spectral, families = _pack("spectral"), _pack("nodes.families")
    grid = (83, 83)  # 1328 px
    paper = plan_call(config.with_sega(spectral.SegaSettings(recipe="paper"), 0), families.QWEN_IMAGE, grid)
    assert paper is not None and paper[0].m_ref_scale == pytest.approx(1328 / 1024)
    assert paper[0].temperature_axis == paper[1].temperature_axis == 1
    for recipe in ("port", "refined"):
        assert plan_call(config.with_sega(spectral.SegaSettings(recipe=recipe), 0), families.QWEN_IMAGE, grid) is None
    # a base_resolution the user sets wins over the code's 1024
    assert plan_call(config.with_sega(spectral.SegaSettings(recipe="paper"), 1328), families.QWEN_IMAGE, grid) is None


@pytest.mark.parametrize("recipe", ["paper", "port", "refined"])
def test_recipes_at_or_below_the_trained_size_are_stock(recipe):
    model = tiny_models.FAMILIES["flux"].build(0)
    for grid in ((8, 8), (8, 5), (3, 8)):
        noise = two_latents("flux", grid, seed=1)
        plain = tiny_models.sample(model, "flux", tokens=grid, steps=2, noise=noise, batch=2, cfg=2.0)
        patched = sega_node(model, recipe, TRAIN_PX)
        out = tiny_models.sample(patched, "flux", tokens=grid, steps=2, noise=noise, batch=2, cfg=2.0)
        assert torch.equal(out, plain)


def test_paper_scales_both_axes_when_only_one_exceeds_the_trained_size():
    """The official Flux code takes one s from the longer side for both axes; the port leaves a short axis plain."""
    model = tiny_models.FAMILIES["flux"].build(0)
    grid = (24, 6)  # rows 3x the trained size, columns below it
    for recipe, columns_plain in (("paper", False), ("port", True)):
        calls = run(sega_node(model, recipe, TRAIN_PX), "flux", grid, two_latents("flux", grid, seed=2), steps=2)
        ids, pe = calls[0].tables[0]
        columns = pe_pairs(pe)[0, :, 36:64]
        stock = ref.table(ids[0], None)[:, 36:64]
        assert torch.allclose(columns, stock, rtol=0, atol=1e-7) == columns_plain, recipe
