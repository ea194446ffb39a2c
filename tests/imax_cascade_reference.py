"""The whole official I-Max cascade as a reference loop on a ComfyUI model (tests/imax_reference.py's float64 steps),
and the official stage transformer's forward on a copy of the tiny model.

The cascade calls the model exactly as a ComfyUI sampler does (one ``comfy.sample.sample_custom`` per pass through
hiflow_cascade_reference's ``_run``, the sample function here ignoring the pack), so a difference from
``nodes/cascade`` is a difference in the I-Max loop. It computes the schedules, the guide and the stage start itself,
from the official code's definitions (pipeline_flux_imax.py at 3b38c11).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import hiflow_cascade_reference as hcref
import imax_reference as ref
import torch
import torch.nn.functional as F


@dataclass
class Case:
    steps: int = 6  # num_inference_steps1
    denoise: float = 1.0
    scales: tuple = (4.0,)
    stage_steps: tuple = (6,)  # num_inference_steps2
    guidance: tuple = (7.0,)  # guidance_scale2
    base_shift: float = 3.0  # time_shift_1
    stage_shift: tuple = (6.0,)  # time_shift_2
    schedule: str = "cosine_decay"
    level: int = 1
    swin: bool = True
    cfg: float = 1.0


def _stage_seed(seed: int, stage: int) -> int:
    return (seed + stage) % 2**64


@torch.no_grad()
def reference_cascade(model, stage_models, positive, negative, vae, latent_raw, seed, case: Case):
    """(final raw latent, per-pass outputs)."""
    import comfy.sample
    import node_helpers

    sigmas = ref.static_sigmas(case.steps, case.base_shift)
    ran = max(1, round(case.steps * case.denoise))
    first = case.steps - ran

    def base_loop(call, x):
        for i in range(ran):
            x = x + (sigmas[first + i + 1] - sigmas[first + i]) * ((x - call(x, i)) / sigmas[first + i])
        return x

    noise = comfy.sample.prepare_noise(latent_raw, seed)
    out, _ = hcref._run(model, sigmas, first, positive, negative, latent_raw, noise, case.cfg, seed, base_loop)
    outs = [out]
    for s, scale in enumerate(case.scales):
        images = vae.decode(out)
        images = images.reshape(-1, *images.shape[-3:])[..., :3].movedim(-1, 1).double()
        rows, cols = (round(d * scale / 2) * 2 for d in latent_raw.shape[-2:])
        r = images.shape[-2] // out.shape[-2]
        images = F.interpolate(images, size=(rows * r, cols * r), mode="bicubic", align_corners=False)
        guide = model.model.process_latent_in(vae.encode(images.float().movedim(1, -1))).double()
        stage_sigmas = ref.static_sigmas(case.stage_steps[s], case.stage_shift[s])
        stage = ref.Stage(stage_sigmas, guide, case.schedule, case.level, case.swin)
        n = case.stage_steps[s]

        def stage_loop(call, x, stage=stage, n=n, sig=stage_sigmas):
            for i in range(n):
                x = stage.prepare(x, i)
                velocity = (x - call(x, i)) / sig[i]
                x = stage.step(x, velocity, i)
            return x[..., 1:-1, 1:-1] if case.swin and n % 2 == 1 else x

        cond = [node_helpers.conditioning_set_values(c, {"guidance": case.guidance[s]}) if case.guidance[s] > 0
                else c for c in (positive, negative)]
        start = torch.zeros(*latent_raw.shape[:-2], rows, cols)
        stage_seed = _stage_seed(seed, s + 1)
        noise = comfy.sample.prepare_noise(start, stage_seed)
        out, _ = hcref._run(stage_models[s], stage_sigmas, 0, *cond, start, noise, case.cfg, stage_seed, stage_loop)
        outs.append(out)
    return out, outs


class OfficialRope(torch.nn.Module):
    """transformer_flux.EmbedND with rope(..., ntk_factor) in ComfyUI's table layout, the text ids of text
    duplication (the first copies·L rows) and the proportional attention scale as the table factor m: the official
    processor's softmax scale sqrt(log_T(N)/d) is m² / sqrt(d) on q·k."""

    def __init__(self, original, factor: float, trained: int, copies: tuple[int, int], text_tokens: int, grid):
        super().__init__()
        self.theta, self.axes_dim, self.factor, self.trained = original.theta, list(original.axes_dim), factor, trained
        self.copies, self.text_tokens, self.grid = copies, text_tokens, grid

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        k = self.copies[0] * self.copies[1]
        text = torch.zeros(ids.shape[0], self.text_tokens, ids.shape[-1])
        text[..., 0] = ids[:, :self.text_tokens, 0]
        if k > 1:  # text_duplication on (the official forward's branch)
            ids = torch.cat([ref.text_duplication(text, *self.grid, self.trained), ids[:, k * self.text_tokens:]], 1)
        seq = 512 * k + self.grid[0] * self.grid[1]  # what the official counts: 512 text tokens per copy
        n = ids.shape[1]
        m = (math.log(n) / math.log(self.trained**2 + 512)) ** 0.25
        tables = []
        for column, dim in enumerate(self.axes_dim):
            angle = ids[..., column].double()[..., None] * ref.omega(dim, self.theta, self.factor, seq, self.trained)
            cos, sin = torch.cos(angle).float() * m, torch.sin(angle).float() * m
            tables.append(torch.stack([cos, -sin, sin, cos], -1).unflatten(-1, (2, 2)))
        return torch.cat(tables, dim=-3).unsqueeze(1)


def official_stage_forward(model, x, sigma, context, y, guidance, factor: float, trained: int, duplicate: bool):
    """The official stage transformer on a copy of ``model``'s diffusion model: the prompt repeated per copy
    (encoder_hidden_states), its ids moved, NTK with the clip, proportional attention; ComfyUI's denoised."""
    diffusion = copy.deepcopy(model.model.diffusion_model)
    grid = (x.shape[-2] // 2, x.shape[-1] // 2)
    copies = (max(1, grid[0] // trained), max(1, grid[1] // trained)) if duplicate else (1, 1)
    diffusion.pe_embedder = OfficialRope(diffusion.pe_embedder, factor, trained, copies, context.shape[1], grid)
    context = torch.cat([context] * (copies[0] * copies[1]), 1)
    out = diffusion(x, sigma, context=context, y=y, guidance=guidance)
    return x - sigma.view(-1, 1, 1, 1) * out
