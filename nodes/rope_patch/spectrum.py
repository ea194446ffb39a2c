"""SEGA's spectrum source for one model call: the spectrum its recipe asks for (spectral/recipes.py), of the step's
latent, computed at most once per step and shared by the step's calls (split conds, the rows of a CFG batch).

The FFT runs on the latent's device in float32; the small float64 math after it (bands, profiles, spread) on the
device the pack's rule picks (devices.py), so a device without float64 hands the power to the CPU: one copy per
step, the results those of the float64 path (docs/ARCHITECTURE.md, "Where float64 is made")."""

from __future__ import annotations

from dataclasses import fields, replace

import torch

from ...spectral import latent_spectrum, recipe_rules, token_map_spectrum
from ..families import FamilyAdapter
from .config import LABEL_SPECTRUM
from .devices import math_device
from .scopes import StepScope
from .token_maps import embedded_token_map, packed_token_map


def compute_spectrum(latent: torch.Tensor, sigma: torch.Tensor, adapter: FamilyAdapter, settings, base_model):
    """The spectrum ``settings.recipe`` asks for (spectral/recipes.py) of ``latent``, its float64 on the rule's
    device."""
    rules = recipe_rules(settings.recipe)
    device = math_device(latent.device)
    if rules.spectrum == "embedding" and base_model is None:
        raise ValueError("SEGA recipe 'paper' takes its spectrum through the model's patch embedding: pass the "
                         "model (build_call_scope(base_model=...)) or sample inside a sampler step.")
    with torch.profiler.record_function(LABEL_SPECTRUM):
        if rules.spectrum == "latent":
            return latent_spectrum(latent, adapter.patch_size, settings, device)
        with torch.no_grad():  # both reference codes compute their spectra without a gradient
            if rules.spectrum == "embedding":
                token_map = embedded_token_map(base_model, adapter, latent, sigma)
            else:
                token_map = packed_token_map(base_model, adapter, latent, sigma)
            return token_map_spectrum(token_map, settings, per_sample=rules.per_sample, device=device)


def call_spectrum(x: torch.Tensor, sigma: torch.Tensor, adapter: FamilyAdapter, settings, step: StepScope | None,
                  base_model=None):
    """The spectrum for the rows of this call (on the rule's device for ``x``), reusing the step's when the call
    holds the step's samples."""
    model = base_model if base_model is not None else (step.model if step is not None else None)
    if step is None or step.x_in.shape[1:] != x.shape[1:] or x.shape[0] % step.x_in.shape[0]:
        return compute_spectrum(x, sigma, adapter, settings, model)  # outside a sampler step, or area-cropped
    key = (adapter.patch_size, settings)
    with step.lock:
        spectrum = step.spectra.get(key)
        if spectrum is None:
            sigma_in = step.sigma if step.sigma.numel() == step.x_in.shape[0] else sigma.reshape(-1)[:1]
            spectrum = step.spectra[key] = compute_spectrum(step.x_in.to(x.device), sigma_in.to(x.device), adapter,
                                                             settings, model)
    device = math_device(x.device)
    if spectrum.valid.device != device:  # a worker thread on another device
        spectrum = on_device(spectrum, device)
    repeats = x.shape[0] // step.x_in.shape[0]
    if repeats == 1 or spectrum.valid.shape[0] != step.x_in.shape[0] or step.x_in.shape[0] == 1:
        return spectrum  # one row (the batch's spectrum, or one sample) broadcasts over the call's rows
    # calc_cond_batch concatenates one full copy of x_in per cond, in order: row j is sample j mod B.
    per_sample = ("axis_h", "axis_w", "radial", "spread", "valid")
    return replace(spectrum, **{name: _repeat_rows(getattr(spectrum, name), repeats) for name in per_sample})


def on_device(spectrum, device: torch.device):
    """The spectrum with every tensor on ``device``."""
    return replace(spectrum, **{f.name: getattr(spectrum, f.name).to(device) for f in fields(spectrum)})


def _repeat_rows(value: torch.Tensor, repeats: int) -> torch.Tensor:
    return value.repeat(repeats, *([1] * (value.dim() - 1)))
