"""Example workflows for models newer than every tested host (issue 36), numbered from ``FIRST_NUMBER`` on, after the
paper's; ``build_newest()`` is merged into ``make_workflows.build_all()``. No host here runs them: the tests skip
them with the reason (registry.MODEL_NEEDS), and the pack's support was tested on stand-ins (docs/models.md).

- Qwen-Image 2.1 at 4096×4096 with SEGA Attention alone, recipe paper: the node the SEGA authors' Aesthetic-4K grid
  favours for Qwen-Image at every shape it tested (README; their numbers are for Qwen-Image, not 2.1). The graph
  follows ComfyUI's template ``image_qwen_image_2_1_t2i`` (Comfy-Org/workflow_templates): UNETLoader, CLIPLoader
  (type qwen_image), VAELoader, TextEncodeQwenImage21 (positive and negative, references optional), an
  EmptyLatentImage, KSampler euler / simple, 25 steps, cfg 1; its subgraph and ResolutionSelector unpacked.
"""

from __future__ import annotations

from typing import Any

from .graph import CORE, MODEL_URLS, OPTIONAL_INPUTS, SHAPES, Graph, Layout, add_note
from .make_workflows import _patches
from .registry import NEWER_HOST

SHAPES["TextEncodeQwenImage21"] = (
    [("clip", "CLIP"), ("images.image_1", "IMAGE"), ("vae", "VAE")],
    [("prompt", "STRING"), ("negative_prompt", "STRING"), ("resolution", "INT")],
    [("positive", "CONDITIONING"), ("negative", "CONDITIONING"), ("latent", "LATENT")], CORE)
OPTIONAL_INPUTS.update({("TextEncodeQwenImage21", "images.image_1"), ("TextEncodeQwenImage21", "vae")})
_REPO = "https://huggingface.co/Comfy-Org/Qwen-Image-2.1/resolve/main"
QWEN21_UNET = "qwen_image_2.1_int8_convrot.safetensors"
QWEN21_TE = "qwen3vl_8b_int8_convrot.safetensors"
QWEN21_VAE = "qwen_image_2.1_vae_bf16.safetensors"
MODEL_URLS.update({  # the template's links
    QWEN21_UNET: (f"{_REPO}/diffusion_models/{QWEN21_UNET}", "diffusion_models"),
    QWEN21_TE: (f"{_REPO}/text_encoders/{QWEN21_TE}", "text_encoders"),
    QWEN21_VAE: (f"{_REPO}/vae/{QWEN21_VAE}", "vae"),
})

QWEN21_4096 = "Qwen-Image-2.1 4096x4096 published SEGA recipe.json"
NAMES = (QWEN21_4096,)
FIRST_NUMBER = 34  # after the paper's 29-33

PROMPT_STUDIO = (
    "A watchmaker's workbench under a bright desk lamp, an open mechanical watch with every gear, jewel and screw "
    "visible, brass tools, tweezers and loupes laid out on green felt, a small paper label reading \"Calibre 2.1\", "
    "sharp macro photograph, highly detailed"
)

NOTE = f"""\
# Qwen-Image 2.1 · 4096×4096 · SEGA recipe

**Needs ComfyUI {NEWER_HOST[QWEN21_UNET]} or newer** (it brought Qwen-Image 2.1): an older one reports \
TextEncodeQwenImage21 missing. The pack's support was tested on a stand-in written from ComfyUI's code, not on the \
model itself (docs/models.md, Qwen-Image 2.1).

4096×4096 in one pass; the pack takes Qwen-Image 2.1 as trained at 2752×2752 (its README's largest native side: \
2048×2048 … 2752×1536), so that is 1.5× per side.

**Model files** (from ComfyUI's template **image_qwen_image_2_1_t2i**; the loaders offer the download links):
- diffusion_models: **{QWEN21_UNET}** (or qwen_image_2.1_bf16.safetensors)
- text_encoders: **{QWEN21_TE}** (or qwen3vl_8b_bf16.safetensors), type qwen_image
- vae: **{QWEN21_VAE}**

**Recipe** (as the template): euler, simple, 25 steps (the official pipeline runs about 40), cfg 1, \
TextEncodeQwenImage21 for both prompts (connect reference images and the VAE to it to edit).

**SEGA Attention alone, recipe paper**: what the SEGA authors' Aesthetic-4K grid favours for Qwen-Image at every \
shape (README; measured on Qwen-Image, not on 2.1). Its base_resolution 0 means 2752 px for Qwen-Image 2.1. \
To try DyPE's dynamic positions instead, add DyPE Patch Model before it.

**Prefix cache:** above the trained size the pack turns Qwen-Image 2.1's text/reference K/V cache off for the run \
(its table changes every step; cached keys would keep step 1's rotation): a text-only run costs about the same, \
an edit with references some percent more per step (docs/models.md). At 2752 or below nothing changes.

**Where this differs from the template, on purpose:**
- The template's subgraph and ResolutionSelector unpacked: the size is the latent's, 4096×4096.
- **VAE Decode (Tiled)**: a plain decode of 4096×4096 needs several GB more VRAM.
- **Save Image** instead of SaveImageAdvanced (an RGBA image needs it: swap it back).
- **Seed fixed**: queue again with our node bypassed (select it, Ctrl+B) to compare the same image without it.

**Memory and time (estimates, not measurements).**
- 24 GB card (RTX 4090): the int8 model (≈ 8 GB) fits; peak ≈ 14–18 GB VRAM, about 15–25 min.
- 80 GB card (A100 / H100): peak ≈ 22–28 GB VRAM with the bf16 model, about 4–7 min (H100) or 8–14 min (A100).

Out of memory: VAE Decode (Tiled) tile_size 256, overlap 32; start ComfyUI with --lowvram; or 3072×3072.
"""


def qwen21(name: str) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, [QWEN21_UNET, "default"])
    clip = at.loaders.add("CLIPLoader", 110, [QWEN21_TE, "qwen_image", "default"])
    vae = at.loaders.add("VAELoader", 60, [QWEN21_VAE])
    model = _patches(g, at.ours, unet, sega=True, dype=False)
    encode = at.prompts.add("TextEncodeQwenImage21", 300, [PROMPT_STUDIO, "", 1024])
    g.link(clip, 0, encode, "clip")
    latent = at.prompts.add("EmptyLatentImage", 110, [4096, 4096, 1])
    ks = at.sampler.add("KSampler", 270, [21, "fixed", 25, 1.0, "euler", "simple", 1.0])
    for src, slot, dst in ((model, 0, "model"), (encode, 0, "positive"), (encode, 1, "negative"),
                           (latent, 0, "latent_image")):
        g.link(src, slot, ks, dst)
    dec = at.sampler.add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    g.link(ks, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = at.sampler.fill("SaveImage", ["dype/qwen-image-2.1_sega_4096"])
    g.link(dec, 0, save, "images")
    add_note(g, NOTE)
    return g.to_json(name)


def build_newest() -> dict[str, dict[str, Any]]:
    """Key → workflow JSON for this module's examples."""
    return {QWEN21_4096: qwen21(QWEN21_4096)}
