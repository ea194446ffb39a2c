"""The DyPE paper's other settings and the published wide sizes as example workflows (issue 29), numbered from
``FIRST_NUMBER`` on; ``build_paper()`` is merged into ``make_workflows.build_all()``.

- Qwen-Image-Edit-2509 at 2656×2656 with DyPE: the DyPE paper's editing setting (arXiv 2510.20766, Fig. 11). The
  graph follows ComfyUI's template ``image_qwen_image_edit_2509`` (comfyui-workflow-templates 0.11.27), 4-step LoRA
  off: LoadImage → FluxKontextImageScale → TextEncodeQwenImageEditPlus (positive and negative), ModelSamplingAuraFlow
  3, 20 steps, cfg 4. The reference stays at its usual size (about 1 MP); only the generated latent is 2656².
- FLUX.1 Kontext dev at 2048² with DyPE: template ``flux_kontext_dev_basic`` (LoadImage → FluxKontextImageScale →
  VAEEncode → ReferenceLatent → FluxGuidance 2.5, 20 steps), the latent an EmptySD3LatentImage, as its note suggests.
- FLUX.1-dev panorama at the DyPE paper's 4096×1365 (its Table 10), on the 16-px grid: 4096×1360.
- FLUX.1-dev and Qwen-Image at 6144×2048 with the node the SEGA authors' Aesthetic-4K grid favours for that model
  (rajabi2001.github.io ``area/static/data/results.js``, the AReA paper's Table 1): DyPE on FLUX.1, SEGA on
  Qwen-Image. The notes (paper_notes.py) give the numbers.
"""

from __future__ import annotations

from typing import Any

from .graph import CORE, LOAD_IMAGE_H, MODEL_URLS, OPTIONAL_INPUTS, SHAPES, Graph, Layout, add_note
from .make_workflows import _patches, _tail, qwen
from .paper_notes import NOTES

SHAPES.update({
    "FluxKontextImageScale": ([("image", "IMAGE")], [], [("IMAGE", "IMAGE")], CORE),
    "VAEEncode": ([("pixels", "IMAGE"), ("vae", "VAE")], [], [("LATENT", "LATENT")], CORE),
    "ReferenceLatent": ([("conditioning", "CONDITIONING"), ("latent", "LATENT")], [],
                        [("CONDITIONING", "CONDITIONING")], CORE),
    "TextEncodeQwenImageEditPlus": ([("clip", "CLIP"), ("vae", "VAE"), ("image1", "IMAGE"), ("image2", "IMAGE"),
                                     ("image3", "IMAGE")], [("prompt", "STRING")],
                                    [("CONDITIONING", "CONDITIONING")], CORE),
})
OPTIONAL_INPUTS.update({("ReferenceLatent", "latent"), ("TextEncodeQwenImageEditPlus", "vae"),
                        *(("TextEncodeQwenImageEditPlus", f"image{i}") for i in (1, 2, 3))})
_QWEN_EDIT = "https://huggingface.co/Comfy-Org/Qwen-Image-Edit_ComfyUI/resolve/main/split_files/diffusion_models"
QWEN_EDIT_UNET = "qwen_image_edit_2509_fp8_e4m3fn.safetensors"
KONTEXT_UNET = "flux1-dev-kontext_fp8_scaled.safetensors"
T5_FP8 = "t5xxl_fp8_e4m3fn_scaled.safetensors"
MODEL_URLS.update({  # the templates' links
    QWEN_EDIT_UNET: (f"{_QWEN_EDIT}/{QWEN_EDIT_UNET}", "diffusion_models"),
    KONTEXT_UNET: ("https://huggingface.co/Comfy-Org/flux1-kontext-dev_ComfyUI/resolve/main/split_files/"
                   f"diffusion_models/{KONTEXT_UNET}", "diffusion_models"),
    T5_FP8: (f"https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main/{T5_FP8}", "text_encoders"),
})
# ComfyUI ships input/example.png with every install, so the graph validates before the user picks a picture.
EXAMPLE_IMAGE = ["example.png", "image"]  # LoadImage: the file, then the upload button's saved value

QWEN_EDIT_2656 = "Qwen-Image-Edit-2509 2656x2656 edit DyPE.json"
KONTEXT_2048 = "FLUX.1-Kontext-dev 2048x2048 edit DyPE.json"
FLUX_PANORAMA = "FLUX.1-dev 4096x1360 DyPE.json"
FLUX_WIDE = "FLUX.1-dev 6144x2048 DyPE.json"
QWEN_WIDE = "Qwen-Image 6144x2048 published SEGA recipe.json"
NAMES = (QWEN_EDIT_2656, KONTEXT_2048, FLUX_PANORAMA, FLUX_WIDE, QWEN_WIDE)
FIRST_NUMBER = 29  # the cards' numbers: 29-33 (issue 29), whatever lands before them

# Our prompts (the paper's editing prompts are not published in text); Kontext's is its template's own.
PROMPT_EDIT = ("Add a red vintage bicycle leaning against the wall on the left and a small black cat sitting in "
               "its front basket, keeping the rest of the scene, the lighting and the perspective unchanged")
PROMPT_KONTEXT = ("Using this elegant style, create a portrait of a swan wearing a pearl tiara and lace collar, "
                  "maintaining the same refined quality and soft color tones.")
PROMPT_PANORAMA = ("A panoramic photograph of a mountain range at sunrise, a chain of snow-capped peaks from edge "
                   "to edge, a winding river in the valley, pine forests and a small village with a church tower, "
                   "thin mist in the valleys, ultra detailed wide-angle landscape photograph")
PROMPT_SKYLINE = ("An ultra-wide photograph of a harbour city skyline at dusk, glass towers and old brick "
                  "warehouses along the waterfront, ferries and sailboats on the bay, lit windows, a suspension "
                  "bridge at the right edge, highly detailed")


def _reference(g: Graph, at: Layout) -> int:
    """LoadImage → FluxKontextImageScale under our nodes: the reference at Kontext's preferred ~1 MP sizes."""
    image = at.ours.add("LoadImage", LOAD_IMAGE_H, EXAMPLE_IMAGE)
    scaled = at.ours.add("FluxKontextImageScale", 30, [])
    g.link(image, 0, scaled, "image")
    return scaled


def qwen_edit(name: str) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, [QWEN_EDIT_UNET, "default"])
    clip = at.loaders.add("CLIPLoader", 110, ["qwen_2.5_vl_7b_fp8_scaled.safetensors", "qwen_image", "default"])
    vae = at.loaders.add("VAELoader", 60, ["qwen_image_vae.safetensors"])
    shift = at.loaders.add("ModelSamplingAuraFlow", 60, [3.0])
    g.link(unet, 0, shift, "model")
    model = _patches(g, at.ours, shift, sega=False)
    reference = _reference(g, at)
    conds = []
    for text, height in ((PROMPT_EDIT, 200), ("", 180)):  # five sockets above the text box
        cond = at.prompts.add("TextEncodeQwenImageEditPlus", height, [text])
        g.link(clip, 0, cond, "clip")
        g.link(vae, 0, cond, "vae")
        g.link(reference, 0, cond, "image1")
        conds.append(cond)
    latent = at.prompts.add("EmptySD3LatentImage", 110, [2656, 2656, 1])
    _sample(g, at, model, *conds, latent, vae, seed=11, steps=20, cfg=4.0, prefix="dype/qwen-image-edit-2509_2656")
    add_note(g, NOTES[name])
    return g.to_json(name)


def kontext(name: str) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, [KONTEXT_UNET, "default"])
    clip = at.loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", T5_FP8, "flux", "default"])
    vae = at.loaders.add("VAELoader", 60, ["ae.safetensors"])
    model = _patches(g, at.ours, unet, sega=False)
    encoded = at.ours.add("VAEEncode", 50, [])
    g.link(_reference(g, at), 0, encoded, "pixels")
    g.link(vae, 0, encoded, "vae")
    pos = at.prompts.add("CLIPTextEncode", 200, [PROMPT_KONTEXT])
    g.link(clip, 0, pos, "clip")
    ref = at.prompts.add("ReferenceLatent", 50, [])
    g.link(pos, 0, ref, "conditioning")
    g.link(encoded, 0, ref, "latent")
    guided = at.prompts.add("FluxGuidance", 60, [2.5])
    g.link(ref, 0, guided, "conditioning")
    neg = at.prompts.add("ConditioningZeroOut", 50, [])
    g.link(pos, 0, neg, "conditioning")
    latent = at.prompts.add("EmptySD3LatentImage", 110, [2048, 2048, 1])
    _sample(g, at, model, guided, neg, latent, vae, seed=21, steps=20, cfg=1.0, prefix="dype/flux1-kontext-dev_2048")
    add_note(g, NOTES[name])
    return g.to_json(name)


def _sample(g: Graph, at: Layout, model: int, pos: int, neg: int, latent: int, vae: int, *, seed: int, steps: int,
            cfg: float, prefix: str) -> None:
    """KSampler (euler, simple), tiled decode and save in the sampler column, as _tail builds them."""
    ks = at.sampler.add("KSampler", 270, [seed, "fixed", steps, cfg, "euler", "simple", 1.0])
    for src, dst in ((model, "model"), (pos, "positive"), (neg, "negative"), (latent, "latent_image")):
        g.link(src, 0, ks, dst)
    dec = at.sampler.add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    g.link(ks, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = at.sampler.fill("SaveImage", [prefix])
    g.link(dec, 0, save, "images")


def flux_wide(name: str, width: int, height: int, prompt: str, seed: int, slug: str) -> dict[str, Any]:
    """FLUX.1-dev with DyPE alone (as make_workflows.flux builds it), at a wide size."""
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, ["flux1-dev.safetensors", "default"])
    clip = at.loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = at.loaders.add("VAELoader", 60, ["ae.safetensors"])
    model = _patches(g, at.ours, unet, sega=False)
    _tail(g, at, model, clip, vae, prompt=prompt, negative=None, width=width, height=height, seed=seed, steps=28,
          cfg=1.0, guidance=3.5, prefix=f"dype/{slug}")
    add_note(g, NOTES[name])
    return g.to_json(name)


def qwen_wide(name: str) -> dict[str, Any]:
    """Qwen-Image with the published SEGA recipe alone (SEGA Attention, no DyPE), its template's recipe."""
    return qwen(name, width=6144, height=2048, prompt=PROMPT_SKYLINE, seed=33, slug="qwen-image_sega_6144x2048",
                dype=False, note=NOTES[name])


def build_paper() -> dict[str, dict[str, Any]]:
    """Key → workflow JSON for this module's examples."""
    return {
        QWEN_EDIT_2656: qwen_edit(QWEN_EDIT_2656),
        KONTEXT_2048: kontext(KONTEXT_2048),
        FLUX_PANORAMA: flux_wide(FLUX_PANORAMA, 4096, 1360, PROMPT_PANORAMA, 31, "flux1-dev_4096x1360"),
        FLUX_WIDE: flux_wide(FLUX_WIDE, 6144, 2048, PROMPT_SKYLINE, 32, "flux1-dev_6144x2048"),
        QWEN_WIDE: qwen_wide(QWEN_WIDE),
    }
