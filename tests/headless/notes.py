"""The MarkdownNote text of each example workflow (the recipe a user reads next to the graph).

Written for the frontend's note: short, one line per paragraph or bullet (the markdown renderer joins wrapped lines
without a space), key facts in bold rather than only in inline code (low contrast in the new node view).
"""

from __future__ import annotations

import native_sizes

from . import floors
from .family_spec import FamilyWorkflow

_FLUX_FILES = """\
**Model files** (the names ComfyUI's own Flux templates use; the loaders offer the download links):
- diffusion_models: **{unet}** ({unet_src})
- text_encoders: **clip_l.safetensors**, **t5xxl_fp16.safetensors**
- vae: **ae.safetensors**"""

_QWEN_FILES = """\
**Model files** (as in ComfyUI's Qwen-Image template, all from Comfy-Org/Qwen-Image_ComfyUI):
- diffusion_models: **qwen_image_fp8_e4m3fn.safetensors**
- text_encoders: **qwen_2.5_vl_7b_fp8_scaled.safetensors**
- vae: **qwen_image_vae.safetensors**"""

_NODES = ("**Our nodes** on their defaults: **DyPE Patch Model** (yarn, dynamic){sega}. They change the model only "
          "above its trained size ({base}); at or below it the output is identical.")
_SEGA = (" then **SEGA Attention** (defaults: recipe **paper (official SEGA code)**, κ 0.08, α 0.15, β 1.5, "
         "floor 1.0), which removes the colour speckle of flat areas at 4K. DyPE → SEGA is **our composition** "
         "(DyPE's dynamic positions; SEGA's per-pair temperatures, from the paper recipe's spectrum, instead of "
         "YaRN's single one); it has no published numbers yet")

_SEGA_ALONE = ("**The published SEGA recipe:** **SEGA Attention** alone on its defaults (recipe **paper (official "
               "SEGA code)**, κ 0.08, α 0.15, β 1.5, floor 1.0): the SEGA authors' own inference code, its static "
               "NTK positions and one attention temperature per RoPE pair from the spectrum of the model's "
               "embedded tokens at every step. That code produced the paper's numbers, on **FLUX.1-dev** (4096²: "
               "ImageReward 1.270 vs 1.107 with DyPE, patch-FID 71.8 vs 95.4). Krea-dev is the model of the "
               "diffusers port's flat-sky measurement (Laplacian variance 76.5 with plain DyPE → 12.7 with its "
               "SEGA; recipe **diffusers port** reproduces that code). It changes the model only above its trained "
               "size (1024 px for Flux.1). DyPE underneath is our composition: workflow **04 DyPE + SEGA 4K 4096px "
               "FLUX.1-Krea-dev or Nunchaku**.")


def _differs(size: str, steps: str | None = None) -> str:
    """The deliberate differences from ComfyUI's own template for this model, each with its reason."""
    lines = ["**Where this differs from ComfyUI's template, on purpose:**"]
    if steps:
        lines.append(steps)
    lines += [f"- **VAE Decode (Tiled)**: a plain decode of {size} needs several GB more VRAM.",
              "- **Seed fixed**: queue again with our nodes bypassed (select them, Ctrl+B) to compare the same "
              "image without them."]
    return "\n".join(lines)


#: How to run a FLUX.1 example on Nunchaku's quantized model instead (nodes/families/nunchaku_flux.py).
NUNCHAKU_FLUX = ("**Nunchaku FLUX** (ComfyUI-nunchaku's int4 / fp4 models): replace **Load Diffusion Model** with its "
                 "**Nunchaku FLUX DiT Loader** (cache_threshold **0**: its first-block cache reuses earlier steps' "
                 "work) and keep the rest of the graph; with SEGA, batch size 1 (one rotary table per batch). Tested "
                 "on a stand-in of Nunchaku's code only (docs/models.md).")

_OOM = ("**Out of memory?** In this order: weight_dtype **fp8_e4m3fn** on the model loader; VAE Decode (Tiled) "
        "tile_size **256**, overlap 32; start ComfyUI with **--lowvram**; a smaller size (e.g. 3072×3072).")


def _flux_note(title: str, unet: str, unet_src: str, size: str, guidance: float, sega: bool, mem24: str,
               time24: str, mem80: str, time80: str, fp8: bool, dype: bool = True) -> str:
    nodes = _NODES.format(sega=_SEGA if sega else "", base="1024 px for Flux.1") if dype else _SEGA_ALONE
    steps_why = ("the DyPE paper's setting (official run_dype.py default); fine detail at 4K needs them." if dype
                 else "the DyPE scripts' default, which the SEGA code adapts, and the diffusers port's example.")
    vram24 = ("the fp8 file fits as it is" if fp8 else
              "set weight_dtype to **fp8_e4m3fn** (the file alone is 22 GB)")
    return f"""\
# {title}

{size} in one pass: no upscaler, no tiling of the diffusion model.

{_FLUX_FILES.format(unet=unet, unet_src=unet_src)}

**Recipe:** euler, simple, cfg 1.0, FluxGuidance {guidance}, negative = ConditioningZeroOut (as ComfyUI's templates). \
No ModelSamplingFlux: its size-dependent shift is fitted up to 1024² and extrapolates to an extreme value here.

{nodes}

{NUNCHAKU_FLUX}

{_differs(size, f"- **28 steps** (template: 20): {steps_why}")}

**Memory and time (estimates, not measurements):**
- 24 GB card (RTX 4090): {vram24}; peak {mem24} VRAM, about {time24}. 32 GB system RAM, 64 GB recommended.
- 80 GB card (A100 / H100): peak {mem80} VRAM, about {time80}.
{floors.floor_line(floors.one_pass(*(int(side) for side in size.split("×")), 28))}

{_OOM}
"""


NOTES: dict[str, str] = {
    "FLUX.1-dev 4096x4096 DyPE.json": _flux_note(
        "FLUX.1-dev · 4096×4096 · DyPE", "flux1-dev.safetensors", "Comfy-Org/flux1-dev", "4096×4096", 3.5, False,
        "≈ 18–22 GB", "25–40 min", "≈ 30–40 GB", "6–10 min (H100) or 12–20 min (A100)", fp8=False),
    "FLUX.1-Krea-dev 4096x4096 published SEGA recipe.json": _flux_note(
        "FLUX.1-Krea-dev · 4096×4096 · the published SEGA recipe", "flux1-krea-dev_fp8_scaled.safetensors",
        "Comfy-Org/FLUX.1-Krea-dev_ComfyUI", "4096×4096", 4.5, True, "≈ 18–22 GB", "25–40 min", "≈ 20–30 GB",
        "6–10 min (H100) or 12–20 min (A100)", fp8=True, dype=False),
    "FLUX.1-Krea-dev 4096x4096 DyPE + SEGA.json": _flux_note(
        "FLUX.1-Krea-dev · 4096×4096 · DyPE + SEGA (our composition)", "flux1-krea-dev_fp8_scaled.safetensors",
        "Comfy-Org/FLUX.1-Krea-dev_ComfyUI", "4096×4096", 4.5, True, "≈ 18–22 GB", "25–40 min", "≈ 20–30 GB",
        "6–10 min (H100) or 12–20 min (A100)", fp8=True),
    "FLUX.1-dev 3840x2160 DyPE.json": _flux_note(
        "FLUX.1-dev · 3840×2160 (16:9) · DyPE", "flux1-dev.safetensors", "Comfy-Org/flux1-dev", "3840×2160", 3.5,
        False, "≈ 15–18 GB", "9–15 min", "≈ 28–34 GB", "2–4 min (H100) or 4–7 min (A100)", fp8=False)
    + "\nNon-square: DyPE scales each image axis by its own ratio to the trained size (3.75× wide, 2.1× high).\n",
    "Qwen-Image 4096x4096 DyPE + SEGA.json": f"""\
# Qwen-Image · 4096×4096 · DyPE + SEGA

4096×4096 in one pass; Qwen-Image's trained sizes reach 1664 per side (1328×1328 … 1664×928, its README), so that is 2.5× per side.

{_QWEN_FILES}

**Qwen-Image-2512** has the same architecture and trained size, so this graph applies unchanged: pick **qwen_image_2512_fp8_e4m3fn.safetensors** in the model loader (same folder and repository; ComfyUI's 2512 template samples 50 steps at cfg 4).

**Recipe:** euler, simple, cfg 2.5, shift: **ModelSamplingAuraFlow 3.1**, as in ComfyUI's Qwen-Image template. It sits before the DyPE node; either order gives the same model.

{_NODES.format(sega=_SEGA, base="1328 px for Qwen-Image")}

{_differs("4096×4096")}

**Memory and time (estimates, not measurements).** cfg 2.5 runs two model passes per step.
- 24 GB card (RTX 4090): the fp8 model (20.4 GB) does not fit next to the 4096² activations, so ComfyUI offloads part of it to system RAM (64 GB recommended): about 60–100 min. 3072×3072 is the comfortable size here.
- 80 GB card (A100 / H100): peak ≈ 35–45 GB VRAM, about 10–15 min (H100) or 20–30 min (A100).

{_OOM}
""",
}


def _files_lines(spec: FamilyWorkflow) -> str:
    by_folder: dict[str, list[str]] = {}
    for f in spec.files:
        by_folder.setdefault(f.folder, []).append(f"**{f.name}**")
    if spec.vae is None:
        by_folder["vae"] = ["none: pixel space (VAE Loader **pixel_space**, built in)"]
    return "\n".join(f"- {folder}: {', '.join(names)}" for folder, names in by_folder.items())


def _recipe(spec: FamilyWorkflow) -> str:
    parts = [f"{spec.sampler}, {spec.scheduler}, {spec.steps} steps, cfg {spec.cfg:g}"]
    if spec.guidance is not None:
        parts.append(f"FluxGuidance {spec.guidance:g}")
    if spec.shift is not None:
        parts.append(f"shift: **{spec.shift[0]} {spec.shift[1]:g}**")
    if spec.t5_options:
        parts.append("T5TokenizerOptions 0 / 0")
    parts.append("negative = ConditioningZeroOut (cfg 1 never evaluates it)" if spec.negative is None
                 else "a text negative")
    return ", ".join(parts)


def family_note(spec: FamilyWorkflow, base_px: int, display_name: str) -> str:
    """The note of one family's example (image_families.py); ``base_px`` and the name are the pack adapter's."""
    side = max(spec.width, spec.height)
    if max(native_sizes.largest(spec.family)) != base_px:
        raise ValueError(f"{spec.family}: the adapter's trained size {base_px} is not its largest documented side "
                         "(tests/native_sizes.py)")
    size = f"{spec.width}×{spec.height}"
    official = not spec.template.startswith("no ")
    source = f"from ComfyUI's template **{spec.template}**" if official else spec.template
    decode = ([f"- **VAE Decode (Tiled)**: a plain decode of {size} needs several GB more VRAM."] if spec.vae
              else [])
    differs = "\n".join(["**Where this differs from the template, on purpose:**", *(f"- {d}" for d in spec.differs),
                         *decode, "- **Seed fixed**: queue again with our nodes bypassed (select them, Ctrl+B) to "
                         "compare the same image without them."])
    remarks = "".join(f"\n\n{r}" for r in spec.remarks)
    host = ("\n\n**Needs ComfyUI 0.30 or newer** (older versions lack this model or its text encoder)."
            if spec.newer_host else "")
    return f"""\
# {spec.title}

{size} in one pass; the pack takes {native_sizes.note_words(spec.family, display_name)} (README, Supported \
models), so that is {side / base_px:.2g}× per side.{host}

**Model files** ({source}; the loaders offer the download links):
{_files_lines(spec)}

**Recipe**{" (as the template, unless listed below)" if official else ""}: {_recipe(spec)}.{remarks}

{_NODES.format(sega=_SEGA if spec.sega else "", base=f"{base_px} px for {display_name}")}

{differs}

**Memory and time (estimates, not measurements).**
- 24 GB card (RTX 4090): {spec.estimate.vram24}; about {spec.estimate.time24}. 32 GB system RAM, 64 GB recommended.
- 80 GB card (A100 / H100): peak {spec.estimate.mem80} VRAM, about {spec.estimate.time80}.

{_OOM}
"""
