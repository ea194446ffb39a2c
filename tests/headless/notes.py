"""The MarkdownNote text of each example workflow (the recipe a user reads next to the graph)."""

from __future__ import annotations

_FLUX_FILES = """\
| file | folder |
|---|---|
| `{unet}` ({unet_src}) | `ComfyUI/models/diffusion_models/` |
| `clip_l.safetensors`, `t5xxl_fp16.safetensors` (comfyanonymous/flux_text_encoders) | `ComfyUI/models/text_encoders/` |
| `ae.safetensors` (the FLUX.1 VAE, from the FLUX.1-dev or -schnell repository) | `ComfyUI/models/vae/` |"""

_QWEN_FILES = """\
| file (all from Comfy-Org/Qwen-Image_ComfyUI) | folder |
|---|---|
| `qwen_image_fp8_e4m3fn.safetensors` | `ComfyUI/models/diffusion_models/` |
| `qwen_2.5_vl_7b_fp8_scaled.safetensors` | `ComfyUI/models/text_encoders/` |
| `qwen_image_vae.safetensors` | `ComfyUI/models/vae/` |"""

_OOM = """\
**Out of memory?** In this order: set `weight_dtype` on the diffusion model loader to `fp8_e4m3fn`; lower
`tile_size` on *VAE Decode (Tiled)* to 256 (overlap 32); start ComfyUI with `--lowvram`; use
a smaller size (DyPE adapts to any size by itself, e.g. 3072×3072). Low system RAM: use an fp8 text encoder."""

_NODES = """\
**Our nodes** (comfyui-dype-sega): *DyPE Patch Model* `yarn`, dynamic on, λt 2, λs 2, `base_resolution` 0 =
the family's trained size ({base}). {sega}Both only change the model above its trained size; leave the defaults."""

_SEGA = ("*SEGA Attention* with its defaults (the port's: κ 0.08, α 0.15, β 1.5, floor 1.0, allocation `rank`, "
         "m_ref `power`) removes the colour speckle in flat areas. DyPE → SEGA is **our composition** (dynamic "
         "positions early, SEGA's per-pair temperatures at every step instead of YaRN's single one); it has no "
         "published numbers yet. ")

_SEGA_ALONE = """\
**The published SEGA recipe.** *SEGA Attention* alone, with its defaults (κ 0.08, α 0.15, β 1.5, floor 1.0,
allocation `rank`, m_ref `power`): static NTK positions and one attention temperature per RoPE pair, from the
latent's spectrum at every step. This is what the diffusers port's `method="sega"` runs, the implementation
behind SEGA's published before/after numbers (flat-sky Laplacian variance 76.5 with plain DyPE → 12.7 with SEGA,
FLUX.1-Krea-dev 4096², 28 steps, guidance 4.5). `base_resolution` 0 = 1024 px for Flux.1. It only changes the
model above its trained size; leave the defaults. DyPE's dynamic positions underneath are our composition:
`flux1-krea-dev_dype_sega_4096.json`."""

_SHIFT_FLUX = """\
**Shift:** the Flux default (1.15). *ModelSamplingFlux* is left out on purpose: its resolution-dependent shift is
fitted up to 1024² and extrapolates to an extreme value at this size."""


def _flux_note(title: str, unet: str, unet_src: str, size: str, guidance: float, sega: bool, mem24: str,
               time24: str, mem80: str, time80: str, dype: bool = True) -> str:
    nodes = _NODES.format(base="1024 px for Flux.1", sega=_SEGA if sega else "") if dype else _SEGA_ALONE
    method = ("DyPE + SEGA" if sega else "DyPE") if dype else "SEGA"
    return f"""\
# {title}

{size} in one pass with {method}: no upscaler, no tiling of the diffusion model.

**Recipe:** 28 steps, `euler` / `simple`, cfg 1.0, FluxGuidance {guidance}, denoise 1.0, seed fixed.
{_SHIFT_FLUX}

{nodes}

**Model files**

{_FLUX_FILES.format(unet=unet, unet_src=unet_src)}

**Memory and time — estimates, not measurements** (they vary with drivers, attention backend and ComfyUI version):
- 24 GB card (RTX 4090): set `weight_dtype` to `fp8_e4m3fn` (the fp16 file alone is 23.8 GB); peak {mem24} VRAM,
  about {time24} (an RTX 3090 takes roughly twice as long). 32 GB system RAM, 64 GB recommended.
- 80 GB card (A100 / H100): default weights, peak {mem80} VRAM, about {time80}.

{_OOM}
"""


NOTES: dict[str, str] = {
    "flux1-dev_dype_4096.json": _flux_note(
        "FLUX.1-dev at 4096×4096 with DyPE", "flux1-dev.safetensors", "black-forest-labs/FLUX.1-dev, gated",
        "4096×4096", 3.5, False, "≈ 18–22 GB", "25–40 min", "≈ 30–40 GB", "6–10 min (H100) or 12–20 min (A100)"),
    "flux1-krea-dev_sega_4096.json": _flux_note(
        "FLUX.1-Krea-dev at 4096×4096: the published SEGA recipe", "flux1-krea-dev.safetensors",
        "black-forest-labs/FLUX.1-Krea-dev, gated", "4096×4096", 4.5, True, "≈ 18–22 GB", "25–40 min",
        "≈ 30–40 GB", "6–10 min (H100) or 12–20 min (A100)", dype=False),
    "flux1-krea-dev_dype_sega_4096.json": _flux_note(
        "FLUX.1-Krea-dev at 4096×4096 with DyPE + SEGA (our composition)", "flux1-krea-dev.safetensors",
        "black-forest-labs/FLUX.1-Krea-dev, gated", "4096×4096", 4.5, True, "≈ 18–22 GB", "25–40 min",
        "≈ 30–40 GB", "6–10 min (H100) or 12–20 min (A100)"),
    "flux1-dev_dype_3840x2160.json": _flux_note(
        "FLUX.1-dev at 3840×2160 (16:9) with DyPE", "flux1-dev.safetensors", "black-forest-labs/FLUX.1-dev, gated",
        "3840×2160", 3.5, False, "≈ 15–18 GB", "9–15 min", "≈ 28–34 GB", "2–4 min (H100) or 4–7 min (A100)")
    + "\nNon-square: DyPE scales each image axis by its own ratio to the trained size (3.75× wide, 2.1× high).\n",
    "qwen-image_dype_sega_4k.json": f"""\
# Qwen-Image at 4096×4096 with DyPE + SEGA

4096×4096 in one pass (Qwen-Image is trained at 1328×1328: 3.1× per side) with DyPE + SEGA.

**Recipe:** 20 steps, `euler` / `simple`, cfg 2.5, denoise 1.0, seed fixed. **Shift:** *ModelSamplingAuraFlow*
3.1, as in ComfyUI's Qwen-Image template; it sits before the DyPE node, either order gives the same model.

{_NODES.format(base="1328 px for Qwen-Image", sega=_SEGA)}

**Model files**

{_QWEN_FILES}

**Memory and time — estimates, not measurements** (cfg 2.5 runs two model passes per step):
- 24 GB card (RTX 4090): the fp8 model (20.4 GB) does not fit next to the 4096² activations, so ComfyUI offloads
  part of it to system RAM (64 GB recommended): about 60–100 min. 3072×3072 is the comfortable size here.
- 80 GB card (A100 / H100): peak ≈ 35–45 GB VRAM, about 10–15 min (H100) or 20–30 min (A100).

{_OOM}
""",
}
