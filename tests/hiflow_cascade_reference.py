"""The whole official cascade as a reference loop on a ComfyUI model (tests/hiflow_reference.py's float64 steps).

It calls the model exactly as a ComfyUI sampler does (one ``comfy.sample.sample_custom`` per pass, the sample
function here ignoring the pack), so a difference from ``nodes/cascade`` is a difference in the HiFlow loop.
It computes the schedule, the re-noise, the upsample and sharpen itself, from the official code's definitions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import hiflow_reference as ref
import torch
import torch.nn.functional as F


@dataclass
class Case:
    steps: int = 6
    denoise: float = 1.0
    scales: tuple = (2.0, 4.0)
    stage_steps: tuple = (4, 3)
    guidance: tuple = (4.5, 6.0)
    alphas: tuple = (1.0, 0.25)
    betas: tuple = (0.5, 0.5)
    ratios: tuple = (0.2, 0.2)
    sharpen: float = 1.0
    swin: bool = True
    cfg: float = 1.0
    schedule: str = "official"  # "official", "model" (the MODEL's own shift) or "static3"


def shift_fn(model):
    import comfy.model_sampling

    sampling = model.get_model_object("model_sampling")
    if isinstance(sampling, comfy.model_sampling.ModelSamplingFlux):
        mu = float(sampling.shift)
        return lambda t: math.exp(mu) / (math.exp(mu) + (1 / t - 1))
    shift = float(sampling.shift)
    return lambda t: shift * t / (1 + (shift - 1) * t)


def official_shift_fn(model, latent_raw):
    """What the official pipeline's scheduler does (diffusers 0.32.1, FLUX.1-dev's scheduler config): its
    ``use_dynamic_shifting = False`` line sets an attribute that ``set_timesteps`` never reads (it reads the config's
    True), so σ = e^mu / (e^mu + 1/t - 1), mu = calculate_shift(base image tokens, 256, 4096, 0.5, 1.15). Only
    FLUX.1-dev has official code; other models keep their own shift (the pack's rule, docs/hiflow.md)."""
    params = getattr(model.model.diffusion_model, "params", None)
    if type(model.model).__name__ != "Flux" or not getattr(params, "guidance_embed", False):
        return shift_fn(model)
    tokens = (latent_raw.shape[-2] // 2) * (latent_raw.shape[-1] // 2)  # packed 2 x 2: latents.shape[1]
    m = (1.15 - 0.5) / (4096 - 256)
    mu = tokens * m + (0.5 - m * 256)
    return lambda t: math.exp(mu) / (math.exp(mu) + (1 / t - 1))


def schedule_fn(model, latent_raw, schedule: str):
    if schedule == "static3":
        return lambda t: 3 * t / (1 + 2 * t)
    return shift_fn(model) if schedule == "model" else official_shift_fn(model, latent_raw)


def blur_sigma(seed: int, stage: int) -> float:
    u = torch.rand((), generator=torch.Generator().manual_seed(seed + stage), dtype=torch.float64)
    return 0.1 + 1.9 * float(u)


def _run(model, sigmas64, first, positive, negative, latent_raw, noise, cfg, seed, loop):
    """One pass: ``loop(call, x)`` in float64, started from σ·noise + (1 - σ)·x0 computed here."""
    import comfy.sample
    import comfy.samplers

    x0_in = model.model.process_latent_in(latent_raw).double()
    start = sigmas64[first] * noise.double() + (1 - sigmas64[first]) * x0_in
    seen = {}

    def sample(wrapped, x, sigmas, extra_args=None, callback=None, disable=None):
        seen["start_error"] = float((x.double() - start).abs().max())

        def call(x64, i):
            s = torch.full((x64.shape[0],), float(sigmas64[first + i]), dtype=torch.float32)
            return wrapped(x64.float(), s, **extra_args).double()

        return loop(call, start.clone()).float()

    sampler = comfy.samplers.KSAMPLER(sample)
    out = comfy.sample.sample_custom(model, noise, cfg, sampler, sigmas64[first:].float(), positive, negative,
                                     latent_raw, disable_pbar=True, seed=seed)
    return out, seen["start_error"]


@torch.no_grad()
def reference_cascade(model, stage_models, positive, negative, vae, latent_raw, seed, case: Case):
    """(final raw latent, per-pass outputs, the largest re-noise error seen)."""
    import comfy.sample
    import node_helpers

    sigmas = ref.official_sigmas(case.steps, schedule_fn(model, latent_raw, case.schedule))
    ran = max(1, round(case.steps * case.denoise))
    first = case.steps - ran
    stored = {}

    def base_loop(call, x):
        for i in range(ran):
            d = call(x, i)
            stored[first + i] = d
            x = x + (sigmas[first + i + 1] - sigmas[first + i]) * ((x - d) / sigmas[first + i])
        return x

    noise = comfy.sample.prepare_noise(latent_raw, seed)
    out, worst = _run(model, sigmas, first, positive, negative, latent_raw, noise, case.cfg, seed, base_loop)
    outs = [out]
    for s, scale in enumerate(case.scales):
        n = case.stage_steps[s]
        offset = case.steps - n
        images = vae.decode(out)
        images = images.reshape(-1, *images.shape[-3:])[..., :3].movedim(-1, 1).double()  # 5-D: Qwen-Image
        rows, cols = (round(d * scale / 2) * 2 for d in latent_raw.shape[-2:])
        r = images.shape[-2] // out.shape[-2]
        images = F.interpolate(images, size=(rows * r, cols * r), mode="bicubic", align_corners=False)
        images = ref.sharpen(images, blur_sigma(seed, s), case.sharpen)
        start_raw = vae.encode(images.float().movedim(1, -1))
        stage = ref.Stage(sigmas[offset:], stored, case.alphas[s], case.betas[s], case.ratios[s], case.swin)

        def stage_loop(call, x, stage=stage, offset=offset, n=n):
            for i in range(n):
                x = stage.prepare(x, i)
                x = stage.step(x, call(x, i), i, offset + i)
            return ref.crop_one(x) if case.swin and n % 2 == 1 else x

        cond = [node_helpers.conditioning_set_values(c, {"guidance": case.guidance[s]}) if case.guidance[s] > 0
                else c for c in (positive, negative)]
        noise = comfy.sample.prepare_noise(start_raw, seed + s + 1)
        out, error = _run(stage_models[s], sigmas, offset, *cond, start_raw, noise, case.cfg, seed + s + 1,
                          stage_loop)
        worst = max(worst, error)
        stored = {**stored, **stage.stored}  # one pred_x0_dict for the run: each stage overwrites its timesteps
        outs.append(out)
    return out, outs, worst
