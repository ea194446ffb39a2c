"""Which models a guided cascade (HiFlow, I-Max) runs on, under one rule, and the facts it takes from the family
adapter.

The rule: an image family of the pack (nodes/families) whose MODEL samples by flow matching (ComfyUI's CONST
``model_sampling``: x = σ·noise + (1 - σ)·x0, the interpolation the re-noise and the velocities assume) on a VAE
latent (Qwen-Image 2.1 included: tests/test_hiflow_newest.py; Nunchaku FLUX too, its guidance read from its
wrapper and its stage tables handed over in nunchaku's layout: stage_rope.py, tests/test_nunchaku_flux_cascades.py).
Video families (the adapter's ``video`` fact) are refused by name (the swin shift and the frequency splits
are 2-D; a time axis would need its own rule), and so are pixel-space models (no VAE latent: the one-pixel swin
shift is a fraction of a patch of 16-32 pixels, not half a token as in the official codes).
"""

from __future__ import annotations

from ..families import FLUX, NUNCHAKU_FLUX, FamilyAdapter, UnsupportedModelError, detect_family

#: FLUX.1 as ComfyUI loads it and as ComfyUI-nunchaku does (its quantized transformer in ComfyUI's ``Flux``): the
#: official codes' model, whose schedule and text positions (all 0) the cascades' official choices assume.
FLUX1_FAMILIES = frozenset({FLUX.name, NUNCHAKU_FLUX.name})


def cascade_family(model, node: str, input_name: str = "model") -> FamilyAdapter:
    """The family of a MODEL the cascades accept, or one error naming ``node``, the model class and the reason
    (``input_name``: the node input it came in by, 'model' or 'stage_model')."""
    if not hasattr(model, "model") or not hasattr(model, "get_model_object"):
        shown = repr(model) if isinstance(model, (str, int, float)) else type(model).__name__
        raise TypeError(f"{node}: '{input_name}' must be a ComfyUI MODEL (from a loader or a patch node), got "
                        f"{shown[:60]}.")
    adapter = detect_family(model.model)
    name = type(model.model).__name__
    if adapter.video:
        raise UnsupportedModelError(
            f"{node} does not run video models ({adapter.display_name}, {name}): its swin shift and frequency split "
            "act on the image plane only and the official code defines nothing for a time axis. Use DyPE / "
            "SEGA in one pass for high-resolution video.")
    if adapter.pixel_space:
        raise UnsupportedModelError(
            f"{node} does not run pixel-space models ({adapter.display_name}, {name}): the official swin shift "
            "moves the patch grid by one latent pixel (half a token); a pixel-space model has no latent for it.")
    import comfy.model_sampling

    sampling = model.get_model_object("model_sampling")
    if not isinstance(sampling, comfy.model_sampling.CONST):
        raise UnsupportedModelError(
            f"{node} needs a flow-matching model ({name} samples with {type(sampling).__name__}): its re-noise and "
            "velocity guidance are written for x = σ·noise + (1 - σ)·x0.")
    return adapter


def trained_grid(adapter: FamilyAdapter, model) -> tuple[float, float]:
    """The family's trained token rows and columns (its trained size, from the adapter's cited facts)."""
    return adapter.bound(model.model).base_grid(0.0)


def trained_image_tokens(adapter: FamilyAdapter, model) -> float:
    """The family's trained image tokens (rows x cols of its trained size)."""
    rows, cols = trained_grid(adapter, model)
    return rows * cols


def latent_compression(adapter: FamilyAdapter) -> int:
    """Image pixels per latent pixel of the family's VAE: its pixels per token over its patch."""
    return adapter.px_per_token // adapter.patch_size
