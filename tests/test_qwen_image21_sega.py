"""SEGA on Qwen-Image 2.1's stand-in (tests/qwen_image21_standin.py), every recipe, alone and after DyPE: each step's
table, text and reference rows included, is the recipe's for that step.

References: "paper" and "port" against tests/sega_references.py's transcriptions of the SEGA authors' code and the
diffusers port (the authors wrote no code for Qwen-Image 2.1; "paper" applies their general rule, the Flux one, to
2.1's own patch embedding: ``img_in`` on the unpatched 64-channel latent); "refined" against spectral/ on the
latent grid (patch 1). Tolerances as in test_sega_recipes_host.py (float32 spectra in the codes)."""

from __future__ import annotations

import pytest
import qwen_image21_standin as standin
import sega_references as ref
import torch
from capture import capture
from patching import _pack, dype, expected_table

pytestmark = pytest.mark.usefixtures("comfy_host")

TRAIN_PX = 128  # 8 tokens per axis
TABLE_TOLERANCE = 4e-6
LABELS = {"paper": "paper (official SEGA code)", "port": "diffusers port", "refined": "refined (ours)"}


def sega_node(model, recipe: str):
    node = _pack("nodes.sega_node").SEGAAttention
    return node.execute(model, 0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, TRAIN_PX, allocation="rank", m_ref="power",
                        recipe=LABELS[recipe]).result[0]


def run(model, grid, steps=3):
    """Two different latents (the second coloured along the columns), a reference spliced into the prompt."""
    import comfy.sample
    import tiny_models

    noise = torch.randn(2, 64, *grid, generator=torch.Generator().manual_seed(sum(grid)))
    noise[1] = noise[1] * torch.linspace(0.2, 3.0, grid[1])
    ref_latent = torch.randn(1, 64, 5, 4, generator=torch.Generator().manual_seed(9))
    positive = tiny_models.qwen_cond(6, 1, reference_latents=[ref_latent], image_slots=[2])
    with capture(model) as (clone, calls):
        comfy.sample.sample(clone, noise, steps, 1.0, "euler", "karras", positive, tiny_models.qwen_cond(5, 2),
                            torch.zeros_like(noise), seed=0, disable_pbar=True)
    assert len(calls) == steps
    return calls


def embedded(model, x: torch.Tensor) -> torch.Tensor:
    """The image tokens after 2.1's img_in (no bias, patch 1), float64: (B, rows * cols, D)."""
    weight = model.model.diffusion_model.img_in.weight.detach().double()
    return x.double().flatten(2).transpose(1, 2) @ weight.T


def pe_pairs(pe: torch.Tensor) -> torch.Tensor:
    """(R, 1, N, pairs, 2, 2) -> (R, N, pairs, 2) [cos * m, sin * m] float64."""
    return torch.stack([pe[:, 0, ..., 0, 0], pe[:, 0, ..., 1, 0]], dim=-1).double()


def dype_rules(token_map, sigma, grid, m_scales):
    """After DyPE: DyPE's frequencies at this sigma, the recipe's spectrum and m_ref allocated over them, on the axes
    DyPE rescales (an axis at or below the trained size keeps plain RoPE and no temperature)."""
    rope, knobs = _pack("rope"), ref.Knobs()
    profiles = ref.axis_profiles(token_map)
    spread = ref.dynamic_spread(ref.radial_profile(token_map), knobs)
    rules = []
    for axis, n in enumerate(grid):
        if n <= 8:
            rules.append(ref.AxisRule(ref.plain(56), None))
            continue
        freqs = rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, n / 8, 8, sigma.double())[0]
        rules.append(ref.AxisRule(freqs, ref.allocation(profiles[axis], freqs, m_scales[axis] ** 0.08, spread, knobs)))
    return tuple(rules)


@pytest.mark.parametrize("with_dype", [False, True])
@pytest.mark.parametrize("recipe", ["paper", "port"])
@pytest.mark.parametrize("grid", [(9, 13), (12, 8)])
def test_reference_recipes_give_each_steps_table(recipe, with_dype, grid):
    model = standin.build(0)
    patched = sega_node(dype(model, TRAIN_PX) if with_dype else model, recipe)
    for call in run(patched, grid):
        ids, pe = call.tables[0]
        got = pe_pairs(pe)
        rows = [None] * call.x.shape[0]
        for row in range(call.x.shape[0]):
            if recipe == "paper":  # the authors' code: one spectrum of the batch's embedded tokens, one s
                if with_dype:
                    token_map = embedded(model, call.x).mean(dim=(0, -1)).reshape(grid)
                    rows[row] = dype_rules(token_map, call.sigma[row:row + 1], grid, (max(grid) / 8,) * 2)
                else:
                    rows[row] = ref.official_flux(embedded(model, call.x), *grid, TRAIN_PX)
            else:  # the port: each sample's packed latent tokens (patch 1), per-axis s
                packed = ref.packed_tokens(call.x[row].double(), patch=1)
                rows[row] = (dype_rules(packed.mean(dim=-1).reshape(grid), call.sigma[row:row + 1], grid,
                                        (grid[0] / 8, grid[1] / 8)) if with_dype
                             else ref.port_sample(packed, *grid, TRAIN_PX))
        assert got.shape[0] == (1 if recipe == "paper" and not with_dype else 2)  # one table where one spectrum
        for row in range(got.shape[0]):
            torch.testing.assert_close(got[row], ref.table(ids[0], rows[row]), rtol=0, atol=TABLE_TOLERANCE)


@pytest.mark.parametrize("with_dype", [False, True])
def test_refined_gives_each_steps_table_from_the_latent_grid(with_dype):
    spectral, rope = _pack("spectral"), _pack("rope")
    model = standin.build(0)
    patched = sega_node(dype(model, TRAIN_PX) if with_dype else model, "refined")
    grid = (9, 13)
    schedule = dict(method="yarn") if with_dype else dict(method="ntk", dynamic=False)
    settings = spectral.SegaSettings(recipe="refined")
    for call in run(patched, grid):
        ids, pe = call.tables[0]
        spectrum = spectral.latent_spectrum(call.x, 1, settings)
        temperatures = []
        for n, key in zip(grid, ("h", "w"), strict=True):
            freqs = rope.axis_frequencies(rope.PositionSchedule(**schedule), 56, 10000.0, n / 8, 8,
                                          call.sigma.double())
            temperatures.append(spectral.axis_temperatures(freqs, getattr(spectrum, f"band_{key}"),
                                                           getattr(spectrum, f"axis_{key}"), spectrum.spread,
                                                           n / 8, settings, spectrum.valid))
        want = expected_table(ids.expand(2, -1, -1), call.sigma, grid, 8, standin.FAMILY, temperatures, **schedule)
        assert pe.shape[0] == 2
        torch.testing.assert_close(pe, want, rtol=2e-6, atol=2e-7)
