"""The Schedule Preview draws what the engine runs: a tiny ComfyUI Flux, patched by DyPE and/or SEGA, is sampled on
the preview's own sigmas, and every model call's per-axis frequencies and temperatures are the preview's curves at
that step (SEGA's temperatures given the spectrum the engine computed for that step, since the preview otherwise
draws them for a synthetic latent). A preview that repeated the rule and drifted from it (a gate, the temperature
axis, the NTK factor) fails here."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from patching import BASE_PX, dype
from test_sega_host import sega

pytestmark = pytest.mark.usefixtures("comfy_host")

TOKENS = (24, 16)  # rows, cols: scale 6 and 4 over the tests' 4-token trained grid
STEPS = 4


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def _patched(case: str):
    model = tiny_models.build_flux(0)
    if case == "dype yarn":
        return dype(model)
    if case == "dype ntk":
        return dype(model, method="ntk")
    if case == "sega alone, paper":
        return sega(model, recipe="paper")
    return sega(dype(model), recipe="refined")


def _request(case: str):
    preview, rope, spectral = _pack("nodes.schedule_preview"), _pack("rope"), _pack("spectral")
    rows, cols = TOKENS
    schedule = rope.PositionSchedule(method="ntk" if case == "dype ntk" else "yarn")
    with_sega = case.startswith("sega") or "sega" in case
    recipe = "paper" if "paper" in case else "refined"
    return preview.PreviewRequest(family="flux", width=cols * 16, height=rows * 16, steps=STEPS, schedule=schedule,
                                  base_px=BASE_PX, sega=with_sega, sega_settings=spectral.SegaSettings(recipe=recipe),
                                  sega_alone=case == "sega alone, paper")


@pytest.mark.parametrize("case", ["dype yarn", "dype ntk", "sega alone, paper", "dype + sega refined"])
def test_the_preview_draws_what_a_sampled_call_uses(case, monkeypatch):
    import comfy.sample
    import comfy.samplers

    wrappers, schedule, curves = (_pack(n) for n in ("nodes.rope_patch.wrappers", "nodes.rope_patch.schedule",
                                                     "nodes.schedule_preview.curves"))
    scopes, spectra = [], []
    real_scope, real_spectrum = wrappers.build_call_scope, schedule.call_spectrum

    def record_scope(*args, **kwargs):
        scopes.append(real_scope(*args, **kwargs))
        return scopes[-1]

    def record_spectrum(*args, **kwargs):
        spectra.append(real_spectrum(*args, **kwargs))
        return spectra[-1]

    monkeypatch.setattr(wrappers, "build_call_scope", record_scope)
    monkeypatch.setattr(schedule, "call_spectrum", record_spectrum)
    request = _request(case)
    sigmas = curves.flow_sigmas(STEPS, "flux", request.shift)
    fam = tiny_models.FAMILIES["flux"]
    latent = fam.latent(1, *fam.latent_hw(*TOKENS))
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    comfy.sample.sample_custom(_patched(case), noise, 1.0, comfy.samplers.sampler_object("euler"),
                               sigmas.to(torch.float32), fam.cond(7, 1), fam.cond(7, 2), latent, disable_pbar=True,
                               seed=0)
    assert len(scopes) == STEPS and all(scope is not None for scope in scopes)

    if spectra:  # the preview's SEGA curves from the engine's own spectra, one row per step
        assert len(spectra) == STEPS
        per_step = ("axis_h", "axis_w", "radial", "spread", "valid")
        from dataclasses import replace

        engine_spectrum = replace(spectra[0], **{name: torch.cat([getattr(s, name) for s in spectra])
                                                 for name in per_step})
        monkeypatch.setattr(curves, "_chunked_spectrum", lambda *args: engine_spectrum)
    drawn = curves.schedule_curves(request)
    rope = _pack("rope")
    original = rope.plain_frequencies(56, 10000.0)
    for step, scope in enumerate(scopes):
        for axis, name in zip(scope.axes, ("rows", "columns"), strict=True):
            curve = drawn["axes"][name]
            freqs = axis.freqs.expand(1, -1)[0]
            # the preview's sigmas are float64, the sampler's float32: the same rule differs by rounding only
            torch.testing.assert_close(curve["ratio"][step], original / freqs, rtol=1e-6, atol=0)
            temperature = torch.ones_like(freqs) if axis.temperature is None else axis.temperature[0].to(freqs)
            torch.testing.assert_close(curve["temperature"][step], temperature, rtol=1e-6, atol=0)
    if case != "dype ntk":  # the premise: a temperature was compared, not only ones
        assert any(axis.temperature is not None for scope in scopes for axis in scope.axes)
