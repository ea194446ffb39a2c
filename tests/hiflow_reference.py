"""An independent float64 transcription of the official HiFlow code (Bujiazi/HiFlow da351a8), written from reading
flux_pipeline_hiflow.py (``flowmatch_step``, the stage loop) and utils.py; it shares nothing with spectral/hiflow.py.

Loop-by-loop where the official code loops (the Butterworth mask), with a plain DFT instead of torch.fft, explicit
index arithmetic for fftshift and for the swin pad / crop, and the official's stateful stage loop (its
``model_output_high`` / ``model_output_ref`` and ``is_even``) kept as it is written there.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

F64 = torch.float64


def butterworth(h_size: int, w_size: int, ratio: float, n: int = 4) -> torch.Tensor:
    mask = torch.zeros(h_size, w_size, dtype=F64)
    if ratio == 0:
        return mask
    for h in range(h_size):
        for w in range(w_size):
            d_square = (2 * h / h_size - 1) ** 2 + (2 * w / w_size - 1) ** 2
            mask[h, w] = 1 / (1 + (d_square / ratio**2) ** n)
    return mask


def _dft(n: int, inverse: bool = False) -> torch.Tensor:
    sign = 1.0 if inverse else -1.0
    k = torch.arange(n, dtype=F64)
    angle = sign * 2 * math.pi * k[:, None] * k[None, :] / n
    return torch.polar(torch.ones_like(angle), angle)


def low_pass(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Real part of IDFT(DFT(x) * mask at the shifted index): fftshift puts frequency k at (k + n//2) % n."""
    h_size, w_size = x.shape[-2:]
    shifted = torch.zeros(h_size, w_size, dtype=F64)
    for k in range(h_size):
        for j in range(w_size):
            shifted[k, j] = mask[(k + h_size // 2) % h_size, (j + w_size // 2) % w_size]
    spectrum = _dft(h_size) @ x.to(torch.complex128) @ _dft(w_size).T
    back = _dft(h_size, True) @ (spectrum * shifted) @ _dft(w_size, True).T / (h_size * w_size)
    return back.real


def pad_one(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(*x.shape[:-2], x.shape[-2] + 2, x.shape[-1] + 2, dtype=x.dtype)
    out[..., 1:x.shape[-2] + 1, 1:x.shape[-1] + 1] = x
    return out


def crop_one(x: torch.Tensor) -> torch.Tensor:
    return x[..., 1:x.shape[-2] - 1, 1:x.shape[-1] - 1].clone()


def upsample(x: torch.Tensor, hw: tuple[int, int]) -> torch.Tensor:
    """The official "latent" upsampling: F.interpolate bicubic, align_corners False (4-D; 5-D folded)."""
    lead = x.shape[:-2]
    flat = x.reshape(lead[0], -1, *x.shape[-2:]).to(F64)
    return F.interpolate(flat, size=hw, mode="bicubic", align_corners=False).reshape(*lead, *hw)


def sharpen(image: torch.Tensor, sigma: float, alpha: float = 1.0, size: int = 3) -> torch.Tensor:
    """(1 + a)·img - a·GaussianBlur(img): torchvision's kernel (outer product of the 1-D pdf), reflect padding."""
    half = (size - 1) * 0.5
    xs = [-half + i for i in range(size)]
    pdf = [math.exp(-0.5 * (x / sigma) ** 2) for x in xs]
    k1 = [p / sum(pdf) for p in pdf]
    img = image.to(F64)
    h_size, w_size = img.shape[-2:]

    def reflect(i: int, n: int) -> int:
        return -i if i < 0 else (2 * (n - 1) - i if i >= n else i)

    r = size // 2
    rows = torch.tensor([reflect(h, h_size) for h in range(-r, h_size + r)])
    cols = torch.tensor([reflect(w, w_size) for w in range(-r, w_size + r)])
    padded = img[..., rows, :][..., cols]
    blurred = torch.zeros_like(img)
    for a in range(size):  # the 2-D kernel k1[a]·k1[b], one shifted copy per tap
        for b in range(size):
            blurred = blurred + k1[a] * k1[b] * padded[..., a:a + h_size, b:b + w_size]
    return (alpha + 1) * img - alpha * blurred


class Stage:
    """One official stage loop: ``step`` is flowmatch_step with its state, on float64 tensors (unpacked latents)."""

    def __init__(self, sigmas: torch.Tensor, reference: dict, alpha: float, beta: float, ratio: float,
                 swin: bool = True):
        self.sigmas = sigmas.to(F64)  # this stage's sigmas, the final 0 included
        self.reference = reference  # step offset in the base schedule -> stored x0 of the previous stage
        self.alpha, self.beta, self.ratio, self.swin = alpha, beta, ratio, swin
        self.n = sigmas.shape[0] - 1
        self.model_output_high = None
        self.model_output_ref = None
        self.is_even = False
        self.stored = {}

    def prepare(self, latents: torch.Tensor, i: int) -> torch.Tensor:
        if not self.swin:
            return latents
        if i % 2 == 0:
            self.is_even = True
            return pad_one(latents)
        self.is_even = False
        return crop_one(latents)

    def step(self, latents: torch.Tensor, denoised: torch.Tensor, i: int, key) -> torch.Tensor:
        sample = latents.to(F64)
        sigma, sigma_next = self.sigmas[i], self.sigmas[i + 1]
        pred_x0 = denoised.to(F64)
        self.stored[key] = pred_x0.clone()
        alpha = self.alpha * (self.n - i) / self.n
        beta = self.beta * (self.n - i) / self.n
        pred_x0_ref = upsample(self.reference[key], tuple(sample.shape[-2:]))
        mask = butterworth(*sample.shape[-2:], self.ratio)
        pred_x0 = pred_x0 + alpha * (low_pass(pred_x0_ref, mask) - low_pass(pred_x0, mask))
        model_output = (sample - pred_x0) / (sigma + 1e-6)
        model_output_ref = (sample - pred_x0_ref) / (sigma + 1e-6)
        if self.model_output_high is not None:
            if self.swin:
                fix = pad_one if self.is_even else crop_one
                self.model_output_high = fix(self.model_output_high)
                self.model_output_ref = fix(self.model_output_ref)
            model_output = model_output + beta * (
                self.model_output_high + model_output_ref - self.model_output_ref - model_output)
        self.model_output_high = model_output
        self.model_output_ref = model_output_ref
        return sample + (sigma_next - sigma) * model_output


def official_sigmas(steps: int, shift_fn) -> torch.Tensor:
    """linspace(1, 1/steps, steps) through the model's shift, then the scheduler's final 0."""
    grid = [1.0 - i * (1.0 - 1.0 / steps) / (steps - 1) for i in range(steps)] if steps > 1 else [1.0]
    return torch.tensor([shift_fn(t) for t in grid] + [0.0], dtype=F64)
