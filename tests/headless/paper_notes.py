"""The notes of paper_workflows.py's examples. Every figure is labelled: a published number (with its source), a
measurement, or an estimate. Published numbers of the wide sizes: the SEGA authors' Aesthetic-4K grid (the AReA
paper's Table 1, rajabi2001.github.io ``area/static/data/results.js``); the DyPE paper's settings: arXiv 2510.20766
(Fig. 11 editing, Table 10 panoramas)."""

from __future__ import annotations

from .notes import NUNCHAKU_FLUX

GRID = ("the SEGA authors' Aesthetic-4K grid (AReA paper, Table 1; rajabi2001.github.io "
        "area/static/data/results.js)")

_OOM = ("**Out of memory?** In this order: weight_dtype **fp8_e4m3fn** on the model loader; VAE Decode (Tiled) "
        "tile_size **256**, overlap 32; start ComfyUI with **--lowvram**; a smaller size.")
_SEED = ("- **Seed fixed**: queue again with our nodes bypassed (select them, Ctrl+B) to compare the same image "
         "without them.")
_TILED = "- **VAE Decode (Tiled)**: a plain decode of {size} needs several GB more VRAM."
_REFERENCE = ("**The reference image** (Load Image: pick your own; **example.png** ships with ComfyUI) stays at its "
              "usual size: **FluxKontextImageScale** brings it to about 1 MP{qwen}. Only the generated image is "
              "{size}. The references keep the positions the model gives them ({where}); their index axis is never "
              "scaled, their rows and columns get the same DyPE frequencies as the generated image, and the scale "
              "comes from the generated latent alone (tested on Kontext- and Qwen-Edit-style graphs).")
_DYPE = ("**DyPE Patch Model** on its defaults (yarn, dynamic: the paper's Dy-YaRN). It changes the model only above "
         "its trained size ({base}); at or below it the output is identical.")

_FLUX_FILES = """\
**Model files** (the names ComfyUI's own Flux templates use; the loaders offer the download links):
- diffusion_models: **flux1-dev.safetensors** (Comfy-Org/flux1-dev)
- text_encoders: **clip_l.safetensors**, **t5xxl_fp16.safetensors**
- vae: **ae.safetensors**"""

_FLUX_RECIPE = ("**Recipe:** euler, simple, **28 steps** (the DyPE paper's setting; template: 20), cfg 1.0, "
                "FluxGuidance 3.5, negative = ConditioningZeroOut (as ComfyUI's templates). No ModelSamplingFlux: its "
                "size-dependent shift is fitted up to 1024² and extrapolates to an extreme value here.")

NOTES: dict[str, str] = {
    "Qwen-Image-Edit-2509 2656x2656 edit DyPE.json": f"""\
# Qwen-Image-Edit-2509 · 2656×2656 edit · DyPE

**The DyPE paper's editing setting** (arXiv 2510.20766, Fig. 11): Qwen-Image-Edit-2509 at 2656×2656, where DyPE \
removes the object duplication of multi-concept edits. 2656 is 2 × 1328, Qwen-Image's square size; the pack takes \
Qwen-Image's long side, 1664 px, as its trained size, so DyPE scales 1.6× per side (base_resolution **1328** scales \
from the square size instead).

**Model files** (as in ComfyUI's template **image_qwen_image_edit_2509**; the loaders offer the download links):
- diffusion_models: **qwen_image_edit_2509_fp8_e4m3fn.safetensors** (Comfy-Org/Qwen-Image-Edit_ComfyUI)
- text_encoders: **qwen_2.5_vl_7b_fp8_scaled.safetensors**
- vae: **qwen_image_vae.safetensors**

{_REFERENCE.format(qwen="; TextEncodeQwenImageEditPlus encodes it at 1024×1024 total pixels", size="2656×2656",
                   where="index 1, rows and columns centred on the reference's own grid; image2 and image3 take "
                   "index 2 and 3")}

**Recipe** (the template's, its 4-step LoRA off): ModelSamplingAuraFlow 3, euler, simple, 20 steps, cfg 4, the \
same reference on the positive and the empty negative TextEncodeQwenImageEditPlus.

{_DYPE.format(base="1664 px for Qwen-Image")}

**Where this differs from the template, on purpose:**
- **Empty latent of 2656×2656** where the template encodes the reference as the latent: the edit is generated far \
above the reference's size.
- **CFGNorm left out**: its inputs differ between ComfyUI versions; add it back between the shift and DyPE if you \
prefer it.
- **The prompt is ours** (the paper's editing prompts are not given in text): describe two new objects at once.
{_TILED.format(size="2656×2656")}
{_SEED}

**Memory and time (estimates, not measurements).** 27,556 image tokens plus about 4,096 reference tokens; cfg 4 \
runs two model passes per step.
- 24 GB card (RTX 4090): the fp8 model (20.4 GB) does not fit next to the activations, so ComfyUI offloads part of \
it to system RAM (64 GB recommended): about 25–40 min.
- 80 GB card (A100 / H100): peak ≈ 30–38 GB VRAM, about 4–6 min (H100) or 8–12 min (A100).

{_OOM}
""",
    "FLUX.1-Kontext-dev 2048x2048 edit DyPE.json": f"""\
# FLUX.1 Kontext dev · 2048×2048 edit · DyPE

An edit generated at 2048×2048 from a reference at its usual size: 2× per side above Flux.1's 1024 px.

**Model files** (as in ComfyUI's template **flux_kontext_dev_basic**; the loaders offer the download links):
- diffusion_models: **flux1-dev-kontext_fp8_scaled.safetensors** (Comfy-Org/flux1-kontext-dev_ComfyUI)
- text_encoders: **clip_l.safetensors**, **t5xxl_fp8_e4m3fn_scaled.safetensors**
- vae: **ae.safetensors**

{_REFERENCE.format(qwen="", size="2048×2048",
                   where="index 1, rows and columns from 0; more references chained through ReferenceLatent are "
                   "offset past the previous ones")}

**Recipe** (the template's): euler, simple, 20 steps, cfg 1, FluxGuidance 2.5 after ReferenceLatent, negative = \
ConditioningZeroOut, the template's prompt.

{_DYPE.format(base="1024 px for Flux.1")}

{NUNCHAKU_FLUX}

**Where this differs from the template, on purpose:**
- **Empty SD3 Latent of 2048×2048** where the template samples on the encoded reference (its own note suggests \
the empty latent for a custom size).
- **One reference image**: the template's Image Stitch of a second (bypassed) image is left out.
{_TILED.format(size="2048×2048")}
{_SEED}

**Memory and time (estimates, not measurements).** 16,384 image tokens plus about 4,096 reference tokens.
- 24 GB card (RTX 4090): the fp8 file fits as it is; peak ≈ 14–18 GB VRAM, about 4–7 min.
- 80 GB card (A100 / H100): peak ≈ 16–20 GB VRAM, about 1–2 min (H100) or 2–4 min (A100).

{_OOM}
""",
    "FLUX.1-dev 4096x1360 DyPE.json": f"""\
# FLUX.1-dev · 4096×1360 panorama · DyPE

**The DyPE paper's panorama setting** (arXiv 2510.20766, Table 10): FLUX at 4096×1365, where Dy-YaRN scored above \
static YaRN on CLIP, ImageReward and Aesthetics. 1365 is not a whole number of Flux's 16-px tokens: **1360** is the \
nearest size the latent allows (85 tokens).

{_FLUX_FILES}

{_FLUX_RECIPE}

{_DYPE.format(base="1024 px for Flux.1")} Non-square: each axis gets its own ratio to the trained size (4× wide, \
1.33× high).

{NUNCHAKU_FLUX}

**Where this differs from ComfyUI's template, on purpose:** 28 steps (above); the prompt is ours.
{_TILED.format(size="4096×1360")}
{_SEED}

**Memory and time (estimates, not measurements).** 21,760 image tokens.
- 24 GB card (RTX 4090): set weight_dtype to **fp8_e4m3fn** (the file alone is 22 GB); peak ≈ 14–17 GB VRAM, about \
6–10 min. 32 GB system RAM, 64 GB recommended.
- 80 GB card (A100 / H100): peak ≈ 27–32 GB VRAM, about 1.5–3 min (H100) or 3–5 min (A100).

{_OOM}
""",
    "FLUX.1-dev 6144x2048 DyPE.json": f"""\
# FLUX.1-dev · 6144×2048 (3:1) · DyPE

**Why DyPE here:** in {GRID}, at 6144×2048 on FLUX.1 DyPE beats SEGA on ImageReward **0.806 vs 0.536**, \
Aesthetic 6.24 vs 6.12, CLIP 28.08 vs 27.64 and PickScore 22.34 vs 21.88; SEGA is ahead only on FID (168.2 vs \
173.3) and patch-FID (94.2 vs 97.4) (published numbers). At 2048×4096 and the square sizes the same grid favours \
SEGA: see the **published SEGA recipe** workflows.

{_FLUX_FILES}

{_FLUX_RECIPE}

{_DYPE.format(base="1024 px for Flux.1")} Each axis gets its own ratio: 6× wide, 2× high.

{NUNCHAKU_FLUX}

**Where this differs from ComfyUI's template, on purpose:** 28 steps (above); the prompt is ours.
{_TILED.format(size="6144×2048")}
{_SEED}

**Memory and time (estimates, not measurements).** 49,152 image tokens. The grid lists 185 s per image for DyPE \
at this size (published, on the authors' GPU).
- 24 GB card (RTX 4090): set weight_dtype to **fp8_e4m3fn**; peak ≈ 17–21 GB VRAM, about 16–26 min. 64 GB system RAM \
recommended.
- 80 GB card (A100 / H100): peak ≈ 30–38 GB VRAM, about 4–7 min (H100) or 8–14 min (A100).

{_OOM}
""",
    "Qwen-Image 6144x2048 published SEGA recipe.json": f"""\
# Qwen-Image · 6144×2048 (3:1) · the published SEGA recipe

**Why SEGA here:** in {GRID}, at 6144×2048 on Qwen-Image SEGA leads DyPE on every metric: ImageReward **1.305 vs \
0.144**, Aesthetic 6.33 vs 5.60, CLIP 29.28 vs 26.60, PickScore 23.22 vs 20.47, FID 160.8 vs 181.7, patch-FID 73.4 \
vs 100.6; DyPE's ImageReward is below the plain model's (0.189) there (published numbers).

**Model files** (as in ComfyUI's Qwen-Image template, all from Comfy-Org/Qwen-Image_ComfyUI):
- diffusion_models: **qwen_image_fp8_e4m3fn.safetensors**
- text_encoders: **qwen_2.5_vl_7b_fp8_scaled.safetensors**
- vae: **qwen_image_vae.safetensors**

**Recipe:** euler, simple, 20 steps, cfg 2.5, shift: **ModelSamplingAuraFlow 3.1**, as in ComfyUI's Qwen-Image \
template.

**SEGA Attention alone** on its defaults (recipe **paper (official SEGA code)**, κ 0.08, α 0.15, β 1.5, floor \
1.0): the SEGA authors' own code, static NTK positions and one attention temperature per RoPE pair. It changes the \
model only above its trained size, which this recipe takes as **1024 px** for Qwen-Image, as that code does (the \
pack's other recipes and DyPE: 1664, the long side of 1664×928): 6144×2048 is 6× wide and 2× tall.

**Where this differs from ComfyUI's template, on purpose:** the prompt is ours.
{_TILED.format(size="6144×2048")}
{_SEED}

**Memory and time (estimates, not measurements).** 49,152 image tokens; cfg 2.5 runs two passes per step. The grid \
lists 548 s per image for SEGA at this size (published, on the authors' GPU).
- 24 GB card (RTX 4090): the fp8 model (20.4 GB) does not fit next to the activations, so ComfyUI offloads part of \
it (64 GB system RAM recommended): about 45–75 min.
- 80 GB card (A100 / H100): peak ≈ 32–40 GB VRAM, about 7–11 min (H100) or 14–22 min (A100).

{_OOM}
""",
}
