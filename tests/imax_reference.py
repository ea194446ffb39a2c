"""An independent float64 transcription of the official I-Max code (PRIS-CV/I-Max 3b38c11), written from reading
pipeline_flux_imax.py (the two passes, ``split_frequency_components_dwt``, the flow projection) and
transformer_flux.py (``rope`` with its NTK clip, text duplication); it shares nothing with spectral/imax.py or
rope/imax_stage.py.

Loop by loop where the official code leans on a library: PyWavelets' ``wavedec2`` / ``waverec2`` ('haar', mode
'symmetric') as the filter-bank convolutions they are (taps, symmetric extension, the trim of ``waverec2``); the
stage loop keeps the official's stateful pad / crop of both the latent and the guide latent. Unpacked latents:
packing is a permutation, so every per-element step is the same on either layout.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

F64 = torch.float64
R2 = math.sqrt(0.5)
DEC_LO, DEC_HI = (R2, R2), (-R2, R2)  # pywt.Wavelet('haar').dec_lo / dec_hi
REC_LO, REC_HI = (R2, R2), (R2, -R2)


def omega(dim: int, theta: float, ntk_factor: float, seq_length: int, trained: int = 64, text: int = 512):
    """transformer_flux.rope's frequencies: NTK, then the clip against position interpolation (ntk_clip = True).
    ``trained`` (64: FLUX.1's 1024² in tokens per side) and ``text`` (512) are the official constants; the host
    tests pass a small trained grid."""
    scale = torch.arange(0, dim, 2, dtype=F64) / dim
    out = 1.0 / ((theta * ntk_factor) ** scale)
    inter = 1.0 / (theta**scale) / math.sqrt((seq_length - text) / trained**2)
    return torch.max(out, inter)


def text_duplication(txt_ids: torch.Tensor, img_rows: int, img_cols: int, trained: int = 64) -> torch.Tensor:
    """transformer_flux.forward's text duplication of the ids: copies i, j moved by i·64, j·64."""
    scale_h = max(1, int(img_rows // trained))
    scale_w = max(1, int(img_cols // trained))
    out = []
    for i in range(scale_h):
        for j in range(scale_w):
            ids = txt_ids.clone()
            ids[:, :, 1] = txt_ids[:, :, 1] + i * trained
            ids[:, :, 2] = txt_ids[:, :, 2] + j * trained
            out.append(ids)
    return torch.cat(out, 1)


def _sym(x: list, i: int) -> float:
    """pywt's 'symmetric' extension (half-sample: ... x1 x0 | x0 x1 ... x_{n-1} | x_{n-1} x_{n-2} ...)."""
    n = len(x)
    while i < 0 or i >= n:
        i = -i - 1 if i < 0 else 2 * n - i - 1
    return x[i]


def dwt(x: list, taps: tuple) -> list:
    """One analysis band: out[k] = Σ_j taps[j]·x[2k + 1 - j], (n + len(taps) - 1)//2 outputs."""
    n_out = (len(x) + len(taps) - 1) // 2
    return [sum(taps[j] * _sym(x, 2 * k + 1 - j) for j in range(len(taps))) for k in range(n_out)]


def idwt(approx: list, detail: list, n_out: int) -> list:
    """Synthesis: x[m] = Σ_k rec_lo[m - 2k]·a[k] + rec_hi[m - 2k]·d[k] (2·len outputs for Haar), trimmed."""
    out = []
    for m in range(2 * len(approx)):
        k, j = divmod(m, 2)
        out.append(REC_LO[j] * approx[k] + REC_HI[j] * detail[k])
    return out[:n_out]


def _rows(grid: torch.Tensor, fn) -> torch.Tensor:
    return torch.tensor([fn(list(map(float, row))) for row in grid], dtype=F64)


def dwt_low(x2d: torch.Tensor, level: int) -> torch.Tensor:
    """wavedec2 → keep the approximation, zero every detail → waverec2, on one (H, W) plane."""
    sizes, approx = [], x2d.to(F64)
    for _ in range(level):
        sizes.append(tuple(approx.shape))
        lo_w = _rows(approx, lambda r: dwt(r, DEC_LO))  # along W
        approx = _rows(lo_w.T, lambda c: dwt(c, DEC_LO)).T  # then along H: the LL band
    for rows, cols in reversed(sizes):  # details are zero; each level trims to the size it came from
        up_h = _rows(approx.T, lambda c, n=rows: idwt(c, [0.0] * len(c), n)).T
        approx = _rows(up_h, lambda r, n=cols: idwt(r, [0.0] * len(r), n))
    return approx


def low_pass(x: torch.Tensor, level: int) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=F64)
    flat_in, flat_out = x.reshape(-1, *x.shape[-2:]), out.view(-1, *x.shape[-2:])
    for index in range(flat_in.shape[0]):
        flat_out[index] = dwt_low(flat_in[index], level)
    return out


def static_sigmas(steps: int, shift: float) -> torch.Tensor:
    """What FlowMatchEulerDiscreteScheduler.set_timesteps gives with sigmas = linspace(1, 1/steps, steps) and
    use_dynamic_shifting False (diffusers 0.30.3 / 0.31.0, the README's config line), then the final 0."""
    grid = [1.0 - i * (1.0 - 1.0 / steps) / (steps - 1) for i in range(steps)] if steps > 1 else [1.0]
    return torch.tensor([shift * s / (1 + (shift - 1) * s) for s in grid] + [0.0], dtype=F64)


class Stage:
    """The extrapolated-resolution loop of pipeline_flux_imax.__call__, step by step, on float64 tensors."""

    def __init__(self, sigmas: torch.Tensor, guide: torch.Tensor, schedule: str = "cosine_decay", level: int = 1,
                 swin: bool = True):
        self.sigmas = sigmas.to(F64)
        self.guide = guide.to(F64)  # latents_guidance, padded and cropped with the latents
        self.schedule, self.level, self.swin = schedule, level, swin
        self.n = sigmas.shape[0] - 1

    def prepare(self, latents: torch.Tensor, i: int) -> torch.Tensor:
        if not self.swin:
            return latents
        if i % 2 == 0:
            self.guide = F.pad(self.guide, (1, 1, 1, 1), mode="constant", value=0)
            return F.pad(latents, (1, 1, 1, 1), mode="constant", value=0)
        self.guide = self.guide[..., 1:-1, 1:-1]
        return latents[..., 1:-1, 1:-1]

    def step(self, latents: torch.Tensor, noise_pred: torch.Tensor, i: int) -> torch.Tensor:
        latents, noise_pred = latents.to(F64), noise_pred.to(F64)
        t = self.sigmas[i] * 1000
        fp_v = -(self.guide - latents) / (t / 1000 + 1e-6)
        cosine_factor = 0.5 * (1 + math.cos(math.pi * (i / self.n)))
        fp_v_low, noise_pred_low = low_pass(fp_v, self.level), low_pass(noise_pred, self.level)
        if self.schedule == "cosine_decay":
            noise_pred = noise_pred + cosine_factor * (fp_v_low - noise_pred_low)
        elif self.schedule == "cosine_shift":
            noise_pred = noise_pred + cosine_factor * (fp_v - noise_pred) + (1 - cosine_factor) * (
                fp_v_low - noise_pred_low)
        elif self.schedule == "constant":
            noise_pred = noise_pred + fp_v_low - noise_pred_low
        return latents + (self.sigmas[i + 1] - self.sigmas[i]) * noise_pred
