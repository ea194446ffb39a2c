"""GGUF-quantized weights, as ComfyUI-GGUF (city96/ComfyUI-GGUF) runs them: the quantized blocks are stored as they
are in the file and every layer dequantizes its weight in its own forward. The model class, its embedder and its ids
stay ComfyUI's, so the patch must behave exactly as on a BF16/FP8 model.

Built from PyPI ``gguf`` (its Q8_0 quantizer and dequantizer), not from ComfyUI-GGUF's code: every Linear of a tiny
Flux whose input width is a multiple of Q8_0's 32-value block is replaced by a layer holding the Q8_0 bytes and
dequantizing them per call. ComfyUI-GGUF's own loader and ModelPatcher subclass were not run (not on PyPI).
"""

from __future__ import annotations

import numpy as np
import pytest
import tiny_models
import torch

gguf_quants = pytest.importorskip("gguf.quants", reason="PyPI gguf (.ci/requirements-host.txt) is not installed")
from gguf import GGMLQuantizationType  # noqa: E402

pytestmark = pytest.mark.usefixtures("comfy_host")
Q8_0 = GGMLQuantizationType.Q8_0


class GGUFQuantizedLinear(torch.nn.Module):
    """A Linear whose weight is Q8_0 bytes, dequantized in every forward (ComfyUI-GGUF's on-the-fly scheme)."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().float().numpy()
        self.register_buffer("blocks", torch.from_numpy(gguf_quants.quantize(weight, Q8_0)))
        self.weight_shape = tuple(weight.shape)
        self.bias = linear.bias

    def dequantized(self) -> torch.Tensor:
        values = gguf_quants.dequantize(self.blocks.numpy(), Q8_0)
        return torch.from_numpy(np.ascontiguousarray(values)).reshape(self.weight_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.dequantized().to(x.dtype), self.bias)


def quantized_flux(seed: int = 0):
    """A tiny Flux whose every eligible Linear holds Q8_0 blocks instead of float weights."""
    model = tiny_models.build_flux(seed)
    replaced = 0
    for name, module in list(model.model.diffusion_model.named_modules()):
        if isinstance(module, torch.nn.Linear) and module.in_features % 32 == 0:
            parent_name, _, child = name.rpartition(".")
            parent = model.model.diffusion_model.get_submodule(parent_name) if parent_name else model.model.diffusion_model
            setattr(parent, child, GGUFQuantizedLinear(module))
            replaced += 1
    assert replaced > 10  # the blocks' attention and MLP projections, not just one layer
    return model


def _dype(model, base_px: float):
    import host

    schedule = host.pack_submodule("rope").PositionSchedule()
    return host.pack_submodule("nodes.rope_patch.clone").patch_model(model, lambda c: c.with_positions(schedule, base_px))


def test_the_stand_in_really_is_quantized():
    model = quantized_flux()
    layers = [m for m in model.model.diffusion_model.modules() if isinstance(m, GGUFQuantizedLinear)]
    assert all(layer.blocks.dtype == torch.uint8 for layer in layers)
    plain = tiny_models.build_flux(0).model.diffusion_model
    name = next(n for n, m in model.model.diffusion_model.named_modules() if isinstance(m, GGUFQuantizedLinear))
    original = plain.get_submodule(name).weight.detach()
    error = (model.model.diffusion_model.get_submodule(name).dequantized() - original).abs().max()
    assert 0 < error < 0.01 * original.abs().max()  # lossy (Q8_0), and close


def test_quantized_weights_sample_stock_at_the_trained_size_and_patched_above():
    model = quantized_flux()
    stock = tiny_models.sample(model, "flux", tokens=(8, 8), steps=2, cfg=2.0)
    assert torch.equal(tiny_models.sample(_dype(model, 128), "flux", tokens=(8, 8), steps=2, cfg=2.0), stock)
    above_stock = tiny_models.sample(model, "flux", tokens=(8, 12), steps=2, cfg=2.0)
    above = tiny_models.sample(_dype(model, 64), "flux", tokens=(8, 12), steps=2, cfg=2.0)
    assert torch.isfinite(above).all() and not torch.equal(above, above_stock)
    # The same schedule as on the float model: the patch depends on the ids and the latent, never on the weights.
    from capture import capture

    with capture(_dype(model, 64)) as (clone, calls):
        tiny_models.sample(clone, "flux", tokens=(8, 12), steps=1)
    with capture(_dype(tiny_models.build_flux(0), 64)) as (clone, float_calls):
        tiny_models.sample(clone, "flux", tokens=(8, 12), steps=1)
    assert torch.equal(calls[0].tables[0][1], float_calls[0].tables[0][1])
