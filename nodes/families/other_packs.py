"""Other packs' loaders the pack refuses, by the class of the diffusion model they put in ComfyUI's model: detection
reads it before the adapters, so a wrapper on a class an adapter takes (Nunchaku Chroma on ComfyUI's ``Flux``) gets
its own reason, not another family's. Every reason says what the model lacks and what to load instead; none of
these could run here (CUDA kernels, packs not on PyPI), so each was read, not run:

* Nunchaku FLUX.2 Klein: nunchaku-tech/ComfyUI-nunchaku @66832ec5 (``nodes/models/flux2.py``: NunchakuFlux2DiTLoader
  puts ``wrappers/flux2.py``'s ComfyFlux2Wrapper on ComfyUI's ``Flux2``); nunchaku's NunchakuFlux2Transformer2DModel
  (not in nunchaku-tech/nunchaku @3a3cc3d, read in its forks, rootonchair/nunchaku @76a3e691
  ``nunchaku/models/transformers/transformer_flux2.py``): a diffusers ``Flux2Transformer2DModel`` whose ``pos_embed``
  is diffusers' Flux2PosEmbed (theta 2000, four axes of 32): ``(cos, sin)``, each (tokens, 128), the value of a pair
  repeated in its two channels, which ``_pack_flux2_rotary_emb`` turns into nunchaku's [sin, cos] pairs and packs.
  The wrapper hands it three id columns (index 0, row, column; text all 0) where the embedder reads four, and
  ComfyUI's Flux.2 puts the text positions on the fourth: what the loader runs cannot be told from the code, and the
  pack has no replacement for that embedder (its Nunchaku one is FLUX.1's [sin, cos] ``pos_embed``).
* Nunchaku Chroma: spooknik/nunchaku-chroma (its loader puts ComfyChromaWrapper, around its
  NunchakuChromaTransformer2DModel, on ComfyUI's ``Flux`` with FLUX.1-schnell's config): its transformer's table was
  not read here, so it is not verified; without this entry it would pass for Nunchaku FLUX.1.
* pi-Flow: ComfyUI-nunchaku @66d29000 (``wrappers/flux_piflow.py``: ComfyFluxPiFlowWrapper, a ComfyFluxWrapper
  around nunchaku's FLUX.1 transformer, in ``models/transformer_flux_piflow.py``'s BasePiFlow model): the model
  returns a policy (Gaussian-mixture means, log-weights and log-stds) that pi-Flow's own sampler integrates between
  its few model calls, not ComfyUI's denoised latent.

Nunchaku Krea 2 (nunchux-ai/nunchaku's NunchakuKrea2Transformer2DModel, for diffusers' Krea2Pipeline) has no ComfyUI
loader in any pack read here (ComfyUI-nunchaku's loaders: FLUX.1, FLUX.2 Klein, pi-Flow, Qwen-Image, SDXL, Z-Image).
"""

from __future__ import annotations

_COMFY_LOADER = "Load Diffusion Model"

#: The diffusion model's class name -> why the pack refuses the model (other packs' loaders).
OTHER_PACKS_REFUSED: dict[str, str] = {
    "ComfyFlux2Wrapper": "Nunchaku FLUX.2 Klein (ComfyUI-nunchaku's FLUX.2 Klein loader) builds its rotary table "
    "inside nunchaku's transformer with diffusers' Flux2PosEmbed ((cos, sin) per channel over four axes, from the "
    "three id columns its wrapper makes) and packs it for nunchaku's kernels; the pack has no replacement for that "
    "embedder (its Nunchaku support is FLUX.1's pos_embed). Load the Flux.2 Klein BF16 / FP8 checkpoint with "
    f"ComfyUI's own loader ({_COMFY_LOADER}): DyPE and SEGA support it",
    "ComfyChromaWrapper": "Nunchaku Chroma (nunchaku-chroma's loader) is not verified with the pack: the rotary "
    "table its NunchakuChromaTransformer2DModel builds was not read. Load the Chroma BF16 / FP8 checkpoint with "
    f"ComfyUI's own loader ({_COMFY_LOADER}): Chroma is supported",
    "ComfyFluxPiFlowWrapper": "pi-Flow (ComfyUI-nunchaku's pi-Flow loader) returns a policy (Gaussian-mixture means, "
    "log-weights and log-stds) that its own sampler integrates between its few model calls, not ComfyUI's denoised "
    "latent that the pack's schedule and cascades follow; not supported. For FLUX.1 at high resolution load "
    "Nunchaku FLUX.1 (Nunchaku FLUX DiT Loader) or a FLUX.1 checkpoint",
}


def other_pack_refusal(base_model) -> str | None:
    """Why the pack refuses ``base_model``'s diffusion model, another pack's wrapper, or None."""
    return OTHER_PACKS_REFUSED.get(type(getattr(base_model, "diffusion_model", None)).__name__)
