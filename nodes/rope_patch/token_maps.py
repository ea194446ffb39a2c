"""Maps of token values for SEGA's reference spectra: what the diffusion model's tokens hold, channel-averaged.

* :func:`embedded_token_map` ("paper"): the channel mean of the family's own patch embedding applied to the
  latent, i.e. of the tokens right after ``x_embedder``/``img_in``, where the SEGA authors' code takes its spectrum.
  The layer is called as the model calls it (its own forward: quantized, offloaded or LoRA-patched weights behave
  as in sampling), on the latent as the model receives it (``calculate_input``, padded to the patch, in the model's
  dtype), a slice of patch rows at a time so the full-width output never has to exist at once.
* :func:`packed_token_map` ("port"): the channel mean of the packed latent tokens, i.e. the latent's channel mean
  averaged over each patch (the diffusers port's spectrum on Flux).

Models that concatenate conditioning channels to the latent (Flux Fill, Wan / HunyuanVideo image-to-video) get zeros
in those channels: the map is that of the generated latent's own tokens (the conditioning does not change between
steps and only adds the layer's response to it, a constant the mean-centring would not remove). Both maps are
``(B, T, rows, cols)`` float32, on the latent's device; no host sync.
"""

from __future__ import annotations

import logging

import torch

from ..families import FamilyAdapter

logger = logging.getLogger(__name__)

#: Output elements per layer call: bounds the transient memory of the embedding pass (bf16: 64 MiB).
CHUNK_ELEMENTS = 1 << 25


class TokenEmbeddingError(RuntimeError):
    """The family's patch embedding does not fit the latent it should embed."""


def _frames(latent: torch.Tensor) -> torch.Tensor:
    """(B, C, H, W) or (B, C, T, H, W) -> (B, C, T, H, W)."""
    if latent.dim() == 4:
        return latent.unsqueeze(2)
    if latent.dim() == 5:
        return latent
    raise ValueError(f"Expected a latent (B, C, H, W) or (B, C, T, H, W), got shape {tuple(latent.shape)}.")


def model_input(base_model, latent: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """The latent as the diffusion model receives it: ``calculate_input`` and the model's inference dtype."""
    dtype_of = getattr(base_model, "get_dtype_inference", None)
    if dtype_of is not None:
        dtype = dtype_of()
    else:  # older hosts: the same rule inline (BaseModel._apply_model)
        dtype = getattr(base_model, "manual_cast_dtype", None) or base_model.get_dtype()
    sampling = getattr(base_model, "model_sampling", None)
    if sampling is not None:
        latent = sampling.calculate_input(sigma.reshape(-1).to(latent.device), latent)
    return latent.to(dtype)


def _padded(latent: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, C, T, H, W) padded on H and W to a multiple of the patch, the way the models pad (circular)."""
    import comfy.ldm.common_dit

    return comfy.ldm.common_dit.pad_to_patch_size(latent, (1, patch, patch))


def packed_token_map(base_model, adapter: FamilyAdapter, latent: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Channel mean of the packed tokens (mean over channels and each patch): (B, T, rows, cols) float32.

    ``base_model`` None (no model at hand, e.g. a preview): the latent as it is instead of the model's input."""
    if base_model is not None:
        latent = model_input(base_model, latent, sigma)
    frames = _padded(_frames(latent), adapter.patch_size)
    mean = frames.mean(dim=1, dtype=torch.float32)  # (B, T, H, W)
    p = adapter.patch_size
    b, t, h, w = mean.shape
    return mean.reshape(b, t, h // p, p, w // p, p).mean(dim=(3, 5))


def _layer_width(layer: torch.nn.Module, layout: str) -> int:
    """Input features (Linear) or channels (convolution) the layer expects."""
    if layout == "conv":
        width = getattr(layer, "in_channels", None)
    else:
        width = getattr(layer, "in_features", None)
    if width is None:
        weight = getattr(layer, "weight", None)
        width = None if weight is None else int(weight.shape[1])
    if width is None:
        raise TokenEmbeddingError(f"{type(layer).__name__} has no in_features/in_channels.")
    return int(width)


def _with_conditioning_channels(frames: torch.Tensor, channels: int) -> torch.Tensor:
    """Append zero channels up to ``channels`` (the model concatenates its conditioning after the latent)."""
    extra = channels - frames.shape[1]
    if extra < 0:
        raise TokenEmbeddingError(f"the layer takes {channels} channels but the latent has {frames.shape[1]}")
    if extra == 0:
        return frames
    zeros = frames.new_zeros(frames.shape[0], extra, *frames.shape[2:])
    return torch.cat([frames, zeros], dim=1)


def linear_rows(layer: torch.nn.Module, frames: torch.Tensor, patch: int, layout: str) -> torch.Tensor:
    """Channel mean of the Linear's output for every token of ``frames`` (B, C, T, H, W) -> (B, T, rows, cols),
    computed a band of patch rows at a time: recipe "paper"'s per-step pass for a Linear patch embedding (public:
    ``python <pack> bench`` times it)."""
    b, c, t, h, w = frames.shape
    rows, cols = h // patch, w // patch
    width = _layer_width(layer, layout)
    if width % (patch * patch):
        raise TokenEmbeddingError(f"its {width} input features are not a whole number of {patch}x{patch} patches")
    frames = _with_conditioning_channels(frames, width // (patch * patch))
    c = frames.shape[1]
    grid = frames.reshape(b, c, t, rows, patch, cols, patch)
    order = (0, 2, 3, 5, 1, 4, 6) if layout == "c ph pw" else (0, 2, 3, 5, 4, 6, 1)
    tokens = grid.permute(*order).reshape(b * t, rows, cols, c * patch * patch)
    out_features = int(getattr(layer, "out_features", 0) or 1)
    band = max(1, CHUNK_ELEMENTS // max(1, b * t * cols * out_features))
    means = [layer(tokens[:, start:start + band].reshape(-1, tokens.shape[-1])).float().mean(dim=-1)
             for start in range(0, rows, band)]
    return torch.cat([m.reshape(b * t, -1, cols) for m in means], dim=1).reshape(b, t, rows, cols)


def _conv_rows(layer: torch.nn.Module, frames: torch.Tensor, patch: int) -> torch.Tensor:
    """Channel mean of a patchifying convolution's output, computed a band of patch rows at a time."""
    b, _, t, h, w = frames.shape
    frames = _with_conditioning_channels(frames, _layer_width(layer, "conv"))
    if isinstance(layer, torch.nn.Conv2d):  # frames fold into the batch
        frames = frames.transpose(1, 2).reshape(b * t, -1, h, w)
    out_channels = int(getattr(layer, "out_channels", 0) or 1)
    band = patch * max(1, CHUNK_ELEMENTS // max(1, frames.shape[0] * out_channels * (w // patch) * t))
    means = [layer(frames[..., start:start + band, :]).float().mean(dim=1) for start in range(0, h, band)]
    out = torch.cat(means, dim=-2)
    return out.reshape(b, t, *out.shape[-2:]) if out.dim() == 3 else out


def embedded_token_map(base_model, adapter: FamilyAdapter, latent: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Channel mean of the family's patch embedding of ``latent``: (B, T, rows, cols) float32.

    Falls back to :func:`packed_token_map` for a family without a declared embedding layer.
    """
    import comfy.utils

    spec = adapter.token_embedding
    if spec is None:
        return packed_token_map(base_model, adapter, latent, sigma)
    layer = comfy.utils.get_attr(base_model, spec.attr)
    frames = _padded(_frames(model_input(base_model, latent, sigma)), adapter.patch_size)
    try:
        with torch.no_grad():
            if spec.layout == "conv":
                return _conv_rows(layer, frames, adapter.patch_size)
            return linear_rows(layer, frames, adapter.patch_size, spec.layout)
    except TokenEmbeddingError as error:
        raise TokenEmbeddingError(
            f"SEGA (recipe 'paper'): {type(base_model).__name__}.{spec.attr} ({type(layer).__name__}) cannot embed "
            f"a latent of shape {tuple(latent.shape)}: {error}. Choose the recipe 'diffusers port' or 'refined', "
            "which take the spectrum of the latent itself, and please report the model."
        ) from error
